"""Profile resolution: arguments, then environment, then settings.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sync.errors import ProfileError
from sync.profile.profile import Profile, account_key


def test_arguments_beat_environment_beat_settings(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text(json.dumps({"server": "http://saved/", "token": "s"}))
    saved = Profile.load(tmp_path, environ={})
    assert (saved.server, saved.token) == ("http://saved", "s")
    env = Profile.load(tmp_path, environ={"CONVERGE_SERVER": "http://env", "CONVERGE_TOKEN": "e"})
    assert (env.server, env.token) == ("http://env", "e")
    args = Profile.load(
        tmp_path,
        server="http://arg",
        token="a",
        environ={"CONVERGE_SERVER": "http://env", "CONVERGE_TOKEN": "e"},
    )
    assert (args.server, args.token) == ("http://arg", "a")
    account = tmp_path / "accounts" / account_key("http://arg", "a")
    assert args.mirror_path == account / "mirror.sqlite3"
    assert args.cache_dir == account / "cache"


def test_token_never_appears_in_repr(tmp_path: Path) -> None:
    profile = Profile.load(tmp_path, server="http://x", token="secret-token", environ={})
    assert "secret-token" not in repr(profile)


def test_missing_server_or_token_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ProfileError) as info:
        Profile.load(tmp_path, environ={}).require_connection()
    assert "--server" in info.value.message and "--token" in info.value.message


def test_save_then_load_round_trips(tmp_path: Path) -> None:
    Profile(tmp_path / "p", server="http://s", token="t").save()
    loaded = Profile.load(tmp_path / "p", environ={})
    assert (loaded.server, loaded.token) == ("http://s", "t")
    assert (tmp_path / "p" / "settings.json").stat().st_mode & 0o077 == 0


def test_unreadable_settings_are_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text("{not json")
    with pytest.raises(ProfileError):
        Profile.load(tmp_path, environ={})


def _mirrored(
    root: Path, token: str, *, server: str | None = None, identity: str | None = None
) -> Path:
    """An account folder with a mirror file, as a sync leaves it."""
    profile = Profile(root, server=server, token=token, server_identity=identity)
    profile.ensure_dirs()
    profile.mirror_path.touch()
    return profile.mirror_path


def test_a_reader_given_a_server_finds_its_mirror_under_a_loopback_alias(tmp_path: Path) -> None:
    mirror = _mirrored(tmp_path, "dev-alice", server="http://127.0.0.1:8001")
    for alias in ("http://localhost:8001", "http://[::1]:8001/", "HTTP://127.0.0.1:8001"):
        assert Profile(tmp_path, server=alias, token="dev-alice").find_mirror() == mirror
    assert Profile(tmp_path, token="dev-alice").find_mirror() == mirror  # no server named


@pytest.mark.parametrize(
    "other",
    [
        "http://127.0.0.2:8001",
        "http://127.0.0.1:8002",
        "https://127.0.0.1:8001",
        "http://staging.example:8001",
        "http://127.0.0.1:8001/v2",
    ],
)
def test_a_reader_given_another_server_never_shows_a_mirror_of_the_same_token(
    tmp_path: Path, other: str
) -> None:
    """Every stub's token is dev-alice: `converge ls --server STAGING` showed the rows of
    the one local server mirrored with that token, as if they were staging's (CONTRACT
    §9.3: a reader never guesses an account). Nothing is mirrored for that server yet."""
    _mirrored(tmp_path, "dev-alice", server="http://127.0.0.1:8001")
    assert Profile(tmp_path, server=other, token="dev-alice").find_mirror() is None


def test_the_bundled_servers_mirror_is_found_through_any_loopback_url(tmp_path: Path) -> None:
    """The demo server is keyed by a name, not its URL (its port changes): a reader naming
    it by the URL it has today still finds it, a remote server does not."""
    mirror = _mirrored(tmp_path, "demo", identity="converge-bundled-demo-server")
    assert Profile(tmp_path, server="http://127.0.0.1:41234", token="demo").find_mirror() == mirror
    assert Profile(tmp_path, server="https://demo.example", token="demo").find_mirror() is None
    # with no token, a loopback URL names a server, not the demo one: any port would match
    assert Profile(tmp_path, server="http://localhost:9999").find_mirror() is None
