"""Profile resolution: arguments, then environment, then settings.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sync.errors import ProfileError
from sync.profile import Profile, account_key


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
