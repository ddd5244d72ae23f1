"""What the offline commands (`converge ls`, `show`, `search`) cost beyond reading the
mirror: they load none of the HTTP client, the engine, its event loop or the commands that
talk to the server (run as a user runs them, in a fresh interpreter over a real mirror
file), and `search` writes its hits at once, not a write per line."""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sync.cli import content
from sync.mirror.store import Mirror
from sync.profile.profile import Profile
from sync.wire.models import Event, SessionView
from tests.sync.test_cli_live import REPO

#: What no offline command may load.
NETWORK_MODULES = (
    "asyncio",
    "httpx",
    "ssl",
    "sync.api.client",
    "sync.engine",
    "sync.files.export",
    "sync.reconcile.reconciler",
    "sync.repair",
)


def one_conversation(root: Path) -> Path:
    """A profile at `root` whose mirror holds one conversation with one message; the
    mirror's path."""
    path = Profile.load(root, server="http://127.0.0.1:9", token="dev-alice", environ={})
    path.mirror_path.parent.mkdir(parents=True, exist_ok=True)
    mirror = Mirror.open(path.mirror_path)
    try:
        mirror.apply([SessionView("ses_1", "Budget", "t", "t", None, None)])
        data = {"role": "user", "content": [{"type": "text", "text": "the budget meeting"}]}
        event = Event("ses_1", "run_1", 1, "message.user", "t", data)
        assert mirror.store_events("ses_1", [event], fetched_at=None)
    finally:
        mirror.close()
    return path.mirror_path


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("profile")
    one_conversation(root)
    return root


def loaded_by(args: list[str], modules: tuple[str, ...] = NETWORK_MODULES) -> tuple[str, list[str]]:
    """The command's output and which of `modules` it loaded, as the console script runs it
    (`app.main.main`) in a fresh interpreter."""
    code = (
        "import sys\n"
        "from app.main import main\n"
        f"code = main({args!r})\n"
        f"print(sorted(m for m in {modules!r} if sys.modules.get(m) is not None))\n"
        "sys.exit(code)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVERGE_")}
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=60,
        check=True,
    )
    output, _, loaded = result.stdout.rstrip("\n").rpartition("\n")
    return output, list(ast.literal_eval(loaded))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["ls"], "ses_1"),
        (["show", "ses_1"], "the budget meeting"),
        (["search", "budget", "meeting"], "the budget meeting"),
    ],
)
def test_an_offline_command_loads_no_network_module(
    profile: Path, args: list[str], expected: str
) -> None:
    output, loaded = loaded_by([*args, "--profile", str(profile)])
    assert expected in output
    assert loaded == []


def test_a_search_of_plain_messages_parses_no_event(profile: Path) -> None:
    """Their text is cut out of the stored JSON: the payload classes stay unloaded."""
    output, loaded = loaded_by(
        ["search", "meeting", "--profile", str(profile)], ("sync.wire.payloads",)
    )
    assert "the budget meeting" in output
    assert loaded == []


class CountingStream(io.StringIO):
    writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        return super().write(text)


def test_search_writes_its_hits_at_once(tmp_path: Path) -> None:
    """An unbuffered stdout (`PYTHONUNBUFFERED`, a pipe to a pager) makes each write a
    system call: 10,000 hits would be 20,000 of them."""
    mirror = Mirror.open(one_conversation(tmp_path))
    try:
        mirror.apply(
            [SessionView(f"ses_{n}", "Budget", "t", f"t{n}", None, None) for n in range(2, 10)]
        )
    finally:
        mirror.close()
    profile = Profile.load(tmp_path, environ={})
    out = CountingStream()
    assert not content.search(profile, ["budget"], json=False, out=out)
    assert out.getvalue().count("\n") == 18 and out.writes == 1
