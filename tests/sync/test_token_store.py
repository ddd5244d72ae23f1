"""Where the saved token lives (CONTRACT §10.1 "Secrets"): the keychain, else a 0600 file.

The "keychain present" path uses an in-memory `keyring` backend installed with
`keyring.set_keyring` (the OS service itself is outside our process); the fallback path is
the real one of these machines (keyring's `fail.Keyring`), plus a keychain that refuses.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import keyring
import keyring.backends.fail
import pytest
from keyring.backend import KeyringBackend
from keyring.errors import KeyringLocked, PasswordDeleteError

from sync.errors import ProfileError
from sync.profile.profile import Profile
from sync.profile.token_store import KEYRING_SERVICE, TOKEN_FILE

SECRET = "tok-7f3a-secret"


class MemoryKeyring(KeyringBackend):
    """A keychain that answers, kept in a dict: what Secret Service would do."""

    priority = 10

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.entries.pop((service, username), None) is None:
            raise PasswordDeleteError("no such entry")


class LockedKeyring(MemoryKeyring):
    """A Secret Service that is there but locked: every call fails."""

    def get_password(self, service: str, username: str) -> str | None:
        raise KeyringLocked("locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise KeyringLocked("locked")


class Install(Protocol):
    def __call__[B: KeyringBackend](self, backend: B) -> B: ...


@pytest.fixture
def use_keyring() -> Iterator[Install]:
    """Install a keyring backend for one test, restoring the previous one after."""
    previous = keyring.get_keyring()

    def install[B: KeyringBackend](backend: B) -> B:
        keyring.set_keyring(backend)
        return backend

    yield install
    keyring.set_keyring(previous)


def _settings(folder: Path) -> dict[str, object]:
    data = json.loads((folder / "settings.json").read_text())
    assert isinstance(data, dict)
    return data


def test_with_a_keychain_the_token_is_in_it_and_settings_hold_no_secret(
    tmp_path: Path, use_keyring: Install
) -> None:
    memory = use_keyring(MemoryKeyring())
    saved = Profile(tmp_path, server="https://converge.example", token=SECRET).save()
    assert saved.token_location is not None
    assert saved.token_location.describe() == "Stored in the system keychain."
    assert list(memory.entries.values()) == [SECRET]
    ((service, account),) = memory.entries
    assert service == KEYRING_SERVICE
    assert str(tmp_path.resolve()) in account and "https://converge.example" in account
    assert SECRET not in (tmp_path / "settings.json").read_text()
    assert not (tmp_path / TOKEN_FILE).exists()
    marker = _settings(tmp_path)["token_stored_in"]
    assert marker == {"store": "keychain", "service": KEYRING_SERVICE, "account": account}
    loaded = Profile.load(tmp_path, environ={})
    assert (loaded.server, loaded.token) == ("https://converge.example", SECRET)


def test_two_profiles_on_one_machine_keep_separate_keychain_entries(
    tmp_path: Path, use_keyring: Install
) -> None:
    memory = use_keyring(MemoryKeyring())
    Profile(tmp_path / "a", server="https://s", token="token-a").save()
    Profile(tmp_path / "b", server="https://s", token="token-b").save()
    assert sorted(memory.entries.values()) == ["token-a", "token-b"]
    assert Profile.load(tmp_path / "a", environ={}).token == "token-a"
    assert Profile.load(tmp_path / "b", environ={}).token == "token-b"


def test_without_a_keychain_the_token_is_a_0600_file_beside_the_settings(
    tmp_path: Path, use_keyring: Install
) -> None:
    use_keyring(keyring.backends.fail.Keyring())
    old_umask = os.umask(0)  # the file is private whatever the umask
    try:
        saved = Profile(tmp_path, server="http://127.0.0.1:8000", token=SECRET).save()
    finally:
        os.umask(old_umask)
    path = tmp_path / TOKEN_FILE
    assert path.read_text().strip() == SECRET
    assert path.stat().st_mode & 0o777 == 0o600
    assert saved.token_location is not None
    assert saved.token_location.describe() == f"Stored in a file readable only by you: {path}"
    assert SECRET not in (tmp_path / "settings.json").read_text()
    assert _settings(tmp_path)["token_stored_in"] == {"store": "file", "file": "token"}
    assert Profile.load(tmp_path, environ={}).token == SECRET


def test_a_locked_keychain_falls_back_to_the_file(tmp_path: Path, use_keyring: Install) -> None:
    use_keyring(LockedKeyring())
    saved = Profile(tmp_path, server="https://s", token=SECRET).save()
    assert saved.token_location is not None and saved.token_location.store == "file"
    assert (tmp_path / TOKEN_FILE).read_text().strip() == SECRET
    assert Profile.load(tmp_path, environ={}).token == SECRET


def test_a_plain_text_token_from_today_s_settings_is_moved_out_on_first_load(
    tmp_path: Path, use_keyring: Install
) -> None:
    """The settings format before the keychain: `{"server": …, "token": "…"}`."""
    memory = use_keyring(MemoryKeyring())
    legacy = {"server": "https://converge.example", "token": SECRET}
    (tmp_path / "settings.json").write_text(json.dumps(legacy))
    loaded = Profile.load(tmp_path, environ={})
    assert (loaded.server, loaded.token) == ("https://converge.example", SECRET)
    assert SECRET not in (tmp_path / "settings.json").read_text()
    assert list(memory.entries.values()) == [SECRET]
    loaded.save()
    assert SECRET not in (tmp_path / "settings.json").read_text()
    assert Profile.load(tmp_path, environ={}).token == SECRET


def test_a_plain_text_token_is_moved_to_the_file_without_a_keychain(
    tmp_path: Path, use_keyring: Install
) -> None:
    use_keyring(keyring.backends.fail.Keyring())
    (tmp_path / "settings.json").write_text(json.dumps({"server": "http://x", "token": SECRET}))
    assert Profile.load(tmp_path, environ={}).token == SECRET
    assert "token" not in _settings(tmp_path)
    assert (tmp_path / TOKEN_FILE).stat().st_mode & 0o777 == 0o600


def test_saving_without_a_token_removes_the_saved_one(tmp_path: Path, use_keyring: Install) -> None:
    memory = use_keyring(MemoryKeyring())
    Profile(tmp_path, server="https://s", token=SECRET).save()
    Profile(tmp_path, server="https://s", token=None).save()
    assert memory.entries == {}
    assert "token_stored_in" not in _settings(tmp_path)
    assert Profile.load(tmp_path, environ={}).token is None


def test_a_token_file_others_can_read_is_refused(tmp_path: Path, use_keyring: Install) -> None:
    use_keyring(keyring.backends.fail.Keyring())
    Profile(tmp_path, server="https://s", token=SECRET).save()
    (tmp_path / TOKEN_FILE).chmod(0o644)
    with pytest.raises(ProfileError) as info:
        Profile.load(tmp_path, environ={})
    assert "chmod 600" in info.value.message


def test_the_token_is_never_logged(
    tmp_path: Path, use_keyring: Install, caplog: pytest.LogCaptureFixture
) -> None:
    use_keyring(LockedKeyring())
    caplog.set_level(logging.DEBUG)
    (tmp_path / "settings.json").write_text(json.dumps({"server": "http://x", "token": SECRET}))
    profile = Profile.load(tmp_path, environ={})
    profile.save()
    logging.getLogger("test").info("profile %r", profile)
    assert caplog.records  # the keychain's refusal was logged, by class name
    assert SECRET not in caplog.text
