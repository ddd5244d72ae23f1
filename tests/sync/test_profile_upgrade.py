"""A profile made before per-account mirrors (CONTRACT §9.3), opened by today's client.

The profile is made by the real older client: the commit before accounts
(`a2ddc57^`, from this repository's history) syncs a real server into
`<profile>/mirror.sqlite3`, with the server and token in `settings.json` as that version
saved them. Today's client must show those rows offline, before any pass, and only for the
account they belonged to.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sync.cli.main import main
from sync.mirror.store import Mirror
from sync.profile.profile import Profile
from sync.wire.models import text_message

ROOT = Path(__file__).resolve().parents[2]
BEFORE_ACCOUNTS = "a2ddc57^"

OLD_SYNC = textwrap.dedent(
    """
    import hashlib, sys
    from pathlib import Path
    import httpx
    from sync.mirror import Mirror, SessionView  # the older client's layout

    url, folder = sys.argv[1:3]
    # The older client's mirror code writes the file its sync wrote (its HTTP layer needs
    # a library today's client no longer ships: the index is read with httpx directly).
    page = httpx.get(url + "/v1/sessions", headers={"Authorization": "Bearer dev-alice"})
    page.raise_for_status()
    Path(folder).mkdir()
    mirror = Mirror.open(Path(folder) / "mirror.sqlite3")
    mirror.apply([SessionView.from_json(item) for item in page.json()["items"]])
    # What the older engine recorded when it opened the mirror (engine.py at that commit).
    mirror.bind_identity(hashlib.sha256(f"{url}\\ndev-alice".encode()).hexdigest())
    mirror.close()
    """
)


@pytest.fixture(scope="module")
def old_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The client tree of the commit before accounts, from git (skip outside a checkout)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs the repository's git history")
    tree = tmp_path_factory.mktemp("before-accounts")
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", BEFORE_ACCOUNTS, "sync/"],
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        pytest.skip(f"{BEFORE_ACCOUNTS} is not in this history")
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    yield tree


def _old_profile(old_client: Path, url: str, folder: Path, titles: list[str]) -> None:
    """`folder` as the older client left it after a sync of `titles`."""
    env = {**os.environ, "PYTHONPATH": str(old_client)}
    done = subprocess.run(
        [sys.executable, "-c", OLD_SYNC, url, str(folder)],
        env=env,
        cwd=old_client,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (folder / "mirror.sqlite3").exists() and not (folder / "accounts").exists()
    (folder / "settings.json").write_text(json.dumps({"server": url, "token": "dev-alice"}))


def _make(live_server: Any, titles: list[str]) -> None:
    for title in titles:
        body = {"token": "dev-alice", "messages": [text_message(title)]}
        response = live_server.control().post("/_stub/sessions", json=body)
        assert response.status_code == 201, response.text


def test_converge_ls_offline_shows_the_rows_of_a_profile_from_before_accounts(
    old_client: Path, live_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    titles = ["Plan from before the upgrade", "Second old plan"]
    _make(live_server, titles)
    folder = tmp_path / "profile"
    _old_profile(old_client, live_server.url, folder, titles)
    capsys.readouterr()
    assert main(["ls", "--profile", str(folder)]) == 0
    out = capsys.readouterr().out
    for title in titles:
        assert title in out


def test_a_pre_account_mirror_is_shown_only_for_the_account_it_belonged_to(
    old_client: Path, live_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bob's token on Alice's upgraded profile: nothing of hers is shown or adopted, and
    her account still finds her rows afterwards."""
    titles = ["Alice's plan from before accounts"]
    _make(live_server, titles)
    folder = tmp_path / "profile"
    _old_profile(old_client, live_server.url, folder, titles)
    capsys.readouterr()
    assert main(["ls", "--profile", str(folder), "--token", "dev-bob"]) == 0
    assert titles[0] not in capsys.readouterr().out
    bob = Profile.load(folder, token="dev-bob", environ={})
    bob.ensure_dirs()  # what opening an engine for bob does
    assert (folder / "mirror.sqlite3").exists() and not bob.mirror_path.exists()
    assert main(["ls", "--profile", str(folder)]) == 0
    assert titles[0] in capsys.readouterr().out


def test_the_windows_first_paint_shows_an_upgraded_profiles_rows_before_any_pass(
    old_client: Path, live_server: Any, tmp_path: Path
) -> None:
    """What `app.desktop` paints from before the engine connects: the profile's account
    mirror after `ensure_dirs`, read as the sidebar reads it."""
    titles = ["Painted from the old mirror"]
    _make(live_server, titles)
    folder = tmp_path / "profile"
    _old_profile(old_client, live_server.url, folder, titles)
    profile = Profile.load(folder, environ={})
    profile.ensure_dirs()
    mirror = Mirror.open(profile.mirror_path, create=False)
    try:
        assert [row.title for row in mirror.rows()] == titles
    finally:
        mirror.close()
