"""Where a profile keeps its saved token: the OS keychain, else a file only the owner reads.

`settings.json` never holds the token (CONTRACT §10.1). It holds a marker saying where the
token is, under `token_stored_in`::

    {"store": "keychain", "service": "converge", "account": "<profile folder> <server>"}
    {"store": "file", "file": "token"}

The keychain is whatever `keyring` finds: Secret Service on Linux, the macOS Keychain, the
Windows Credential Manager. The account name carries the profile folder and the server, so
two profiles (two devices on one machine) or two servers never share an entry, and the
marker records it, so a profile folder that moved still finds its token. Where no keychain
answers (keyring's `fail.Keyring`, `NoKeyringError`, a locked or absent Secret Service: the
case on headless machines and in CI), the token goes to `<profile>/token`, created 0600
whatever the umask, beside `settings.json` and never inside it. `TokenLocation.describe()`
is the sentence the Settings dialog shows.

Every keychain call may block (an unlock prompt, D-Bus), so the window makes them on a worker
thread. Every keychain call is allowed to fail: a keychain that errors is treated as absent (logged
by class name only, never with the token), so saving always succeeds somewhere.
"""

from __future__ import annotations

import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sync.cli.token_input import read_token_file
from sync.errors import ProfileError

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

log = logging.getLogger(__name__)

KEYRING_SERVICE = "converge"
TOKEN_FILE = "token"
MARKER_KEY = "token_stored_in"
#: The account name's server part for a profile whose server is the bundled demo one.
BUNDLED = "built-in demo server"


@dataclass(frozen=True)
class TokenLocation:
    """Where a saved token lives: `keychain` (with its account) or `file` (with its path)."""

    store: str
    account: str = ""
    path: Path | None = None

    def describe(self) -> str:
        """The sentence Settings shows under the token field."""
        if self.store == "keychain":
            return "Stored in the system keychain."
        return f"Stored in a file readable only by you: {self.path}"

    def marker(self) -> dict[str, str]:
        """What settings.json keeps instead of the token."""
        if self.store == "keychain":
            return {"store": "keychain", "service": KEYRING_SERVICE, "account": self.account}
        return {"store": "file", "file": TOKEN_FILE}


def keychain_account(root: Path, server: str | None) -> str:
    """The keychain entry's account name: one per profile folder and server."""
    try:
        folder = root.expanduser().resolve()
    except OSError:
        folder = root.expanduser().absolute()
    return f"{folder} {server.rstrip('/') if server else BUNDLED}"


def available_keychain() -> KeyringBackend | None:
    """The keychain keyring would use, or None when it has none that can hold a secret.

    keyring is imported here, not at the top: finding its backends is slow, and
    `import sync.profile.profile` (before the window's first paint) must not pay for it.
    """
    try:
        import keyring
        import keyring.backends.fail

        backend = keyring.get_keyring()
    except Exception as exc:  # a broken keyring configuration is "no keychain"
        log.info("no keychain: %s", type(exc).__name__)
        return None
    if isinstance(backend, keyring.backends.fail.Keyring):
        return None
    try:
        usable = float(backend.priority) > 0
    except Exception:
        usable = False
    return backend if usable else None


def save_token(root: Path, server: str | None, token: str) -> TokenLocation:
    """Keep `token` for this profile and server: in the keychain when one takes it, else in
    the 0600 file. The other place is cleared, so the token is never left in two."""
    account = keychain_account(root, server)
    backend = available_keychain()
    if backend is not None:
        try:
            backend.set_password(KEYRING_SERVICE, account, token)
        except Exception as exc:
            log.warning("the keychain refused the token (%s); using a file", type(exc).__name__)
        else:
            (root / TOKEN_FILE).unlink(missing_ok=True)
            return TokenLocation("keychain", account=account)
    path = root / TOKEN_FILE
    write_private_file(path, token + "\n")
    return TokenLocation("file", path=path)


def load_token(root: Path, marker: Any) -> tuple[str | None, TokenLocation | None]:
    """The token the marker points at, and where it is (None, None: no marker).

    A keychain entry that is gone or a keychain that does not answer gives (None, location):
    the window then asks for the token again rather than failing to start.
    """
    if not isinstance(marker, dict):
        return None, None
    if marker.get("store") == "keychain" and isinstance(marker.get("account"), str):
        location = TokenLocation("keychain", account=marker["account"])
        backend = available_keychain()
        if backend is None:
            return None, location
        try:
            token = backend.get_password(KEYRING_SERVICE, location.account)
        except Exception as exc:
            log.warning("the keychain did not answer (%s)", type(exc).__name__)
            return None, location
        return (token or None), location
    if marker.get("store") == "file":
        path = root / TOKEN_FILE
        location = TokenLocation("file", path=path)
        if not path.exists():
            return None, location
        return read_token_file(path), location
    return None, None


def forget_token(root: Path, marker: Any) -> None:
    """Remove a saved token from wherever the marker says it is (and the file in any case)."""
    (root / TOKEN_FILE).unlink(missing_ok=True)
    if not (isinstance(marker, dict) and marker.get("store") == "keychain"):
        return
    account = marker.get("account")
    backend = available_keychain()
    if backend is None or not isinstance(account, str):
        return
    try:
        backend.delete_password(KEYRING_SERVICE, account)
    except Exception as exc:  # already gone, or the keychain is locked: nothing to undo
        log.info("keychain entry not removed (%s)", type(exc).__name__)


def write_private_file(path: Path, text: str) -> None:
    """Write `path` atomically as 0600 (the temporary file is 0600 from its creation, so the
    secret is never readable by others, whatever the umask)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if hasattr(os, "fchmod"):  # POSIX; mkstemp's file is already owner-only
            os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise ProfileError(f"Cannot write {path}: {exc.strerror or exc}.") from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
