"""A profile: a folder holding settings and one mirror (with its cache) per account.

Layout::

    <profile>/settings.json                   {"server": "http://…", "token": "…"}
    <profile>/accounts/<key>/account.json     {"server": "http://…", "token": fingerprint}
    <profile>/accounts/<key>/mirror.sqlite3   the SQLite mirror of that account
    <profile>/accounts/<key>/cache/           its artifact bytes, one file per artifact

An account is a server and the principal behind a token (CONTRACT §9.3). The API has no
route that names the principal, so the key is derived from the server and the token: two
tokens of one principal get two mirrors (each fills from the server on its first sync), but
a sync with another account's token can never show or prune this account's rows. Before
accounts, a profile held one `mirror.sqlite3` at its top; the first account opened adopts it
(what that profile showed until then).

Every folder here is 0700 and every file 0600, whatever the umask (CONTRACT §10.1, through
`sync.private_files`); folders and files an older version left readable are tightened when
the account is opened.

Precedence for the server URL and the token: explicit argument (`--server`, `--token`),
then the environment (`CONVERGE_SERVER`, `CONVERGE_TOKEN`), then `settings.json`.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from platformdirs import user_data_dir

from sync.errors import ProfileError
from sync.private_files import (
    PRIVATE_DIR_MODE,
    PRIVATE_FILE_MODE,
    private_dir,
    tighten,
    write_private,
)

ENV_SERVER = "CONVERGE_SERVER"
ENV_TOKEN = "CONVERGE_TOKEN"
ENV_PROFILE = "CONVERGE_PROFILE"
SETTINGS_FILE = "settings.json"
MIRROR_FILE = "mirror.sqlite3"
CACHE_DIR = "cache"
ACCOUNTS_DIR = "accounts"
ACCOUNT_FILE = "account.json"


def default_profile_dir() -> Path:
    """`$CONVERGE_PROFILE`, else `<user data dir>/converge/profiles/default`."""
    env = os.environ.get(ENV_PROFILE)
    if env:
        return Path(env).expanduser()
    return Path(user_data_dir("converge", appauthor=False)) / "profiles" / "default"


def normalize_server(url: str) -> str:
    """The server as an account key sees it: scheme and host lower-cased, no trailing `/`."""
    parts = urlsplit(url.strip())
    return urlunsplit(
        (parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/"), parts.query, "")
    )


def account_key(server_identity: str, token: str) -> str:
    """The folder name of one account's mirror: a digest, so the token never shows in it."""
    digest = hashlib.sha256(f"{normalize_server(server_identity)}\n{token}".encode())
    return digest.hexdigest()[:24]


def token_fingerprint(token: str) -> str:
    """What `account.json` keeps of the token: enough to find the account, not the token."""
    return hashlib.sha256(f"converge-token\n{token}".encode()).hexdigest()[:16]


class _Secret(str):
    """A str whose repr hides the value, so a token never lands in a log line."""

    def __repr__(self) -> str:
        return "'***'"


@dataclass(frozen=True)
class Profile:
    """Where a profile lives and which server and token it uses (either may be None)."""

    root: Path
    server: str | None = None
    token: str | None = field(default=None, repr=False)
    #: What names the server in the account key when its URL does not: the bundled demo
    #: server belongs to this profile whatever port it gets. None: the URL.
    server_identity: str | None = None

    @property
    def settings_path(self) -> Path:
        return self.root / SETTINGS_FILE

    @property
    def has_account(self) -> bool:
        """Whether the server and token that name an account are known."""
        return bool((self.server_identity or self.server) and self.token)

    @property
    def account_dir(self) -> Path:
        """This account's folder; a ProfileError when the server or the token is unknown."""
        identity = self.server_identity or self.server
        if not identity or not self.token:
            self.require_connection()
        assert identity is not None and self.token is not None
        return self.root / ACCOUNTS_DIR / account_key(identity, str(self.token))

    @property
    def mirror_path(self) -> Path:
        return self.account_dir / MIRROR_FILE

    @property
    def cache_dir(self) -> Path:
        return self.account_dir / CACHE_DIR

    def known_accounts(self) -> list[Path]:
        """The account folders of this profile that hold a mirror."""
        folder = self.root / ACCOUNTS_DIR
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.iterdir() if (p / MIRROR_FILE).exists())

    def find_mirror(self) -> Path | None:
        """The mirror a reader (`converge ls`) should show, without the network.

        The account named by the server and token when it has a mirror; else the accounts
        whose token matches (the same server under another name: `localhost` for
        `127.0.0.1`), narrowed by the server when one matches; with neither given, every
        account. One candidate is the answer; none is None (nothing mirrored yet); several
        is a ProfileError: a reader never mixes or guesses accounts (CONTRACT §9.3).
        """
        if self.has_account and self.mirror_path.exists():
            return self.mirror_path
        candidates = self.known_accounts()
        if self.token:
            mark = token_fingerprint(str(self.token))
            candidates = [p for p in candidates if _account_info(p).get("token") == mark]
        if self.server and len(candidates) > 1:
            server = normalize_server(self.server)
            same = [p for p in candidates if _account_info(p).get("server") == server]
            candidates = same or candidates
        if not candidates:
            return None
        if len(candidates) > 1:
            raise ProfileError(
                f"The profile {self.root} mirrors {len(candidates)} accounts; name one with "
                "--server and --token."
            )
        return candidates[0] / MIRROR_FILE

    @classmethod
    def load(
        cls,
        root: Path | str | None = None,
        *,
        server: str | None = None,
        token: str | None = None,
        environ: dict[str, str] | None = None,
    ) -> Profile:
        """Resolve a profile: arguments, then environment, then the saved settings."""
        env = os.environ if environ is None else environ
        folder = Path(root).expanduser() if root is not None else default_profile_dir()
        saved = read_settings(folder)
        resolved_server = server or env.get(ENV_SERVER) or _opt(saved.get("server"))
        resolved_token = token or env.get(ENV_TOKEN) or _opt(saved.get("token"))
        return cls(
            root=folder,
            server=resolved_server.rstrip("/") if resolved_server else None,
            token=_Secret(resolved_token) if resolved_token else None,
        )

    def require_connection(self) -> tuple[str, str]:
        """(server, token), or a ProfileError saying what is missing and how to give it."""
        missing = []
        if not self.server:
            missing.append(f"a server URL (--server or {ENV_SERVER})")
        if not self.token:
            missing.append(f"a token (--token or {ENV_TOKEN})")
        if missing:
            raise ProfileError(
                f"Missing {' and '.join(missing)} for profile {self.root}; "
                f"give them on the command line, in the environment or in {self.settings_path}."
            )
        assert self.server is not None and self.token is not None
        return self.server, str(self.token)

    def ensure_dirs(self) -> None:
        """Create this account's folders, adopting a pre-account mirror (see the module)."""
        private_dir(self.root)
        account = self.account_dir
        fresh = not account.exists()
        private_dir(self.cache_dir)
        for folder in (self.root / ACCOUNTS_DIR, account, self.cache_dir):
            tighten(folder, PRIVATE_DIR_MODE)  # ours by name; the root may be the user's
        if fresh:
            identity = self.server_identity or self.server
            assert identity is not None and self.token is not None
            info = {"server": normalize_server(identity), "token": token_fingerprint(self.token)}
            write_private(account, ACCOUNT_FILE, json.dumps(info) + "\n")
            self._adopt_legacy_mirror(account)
        tighten(account / ACCOUNT_FILE, PRIVATE_FILE_MODE)

    def _adopt_legacy_mirror(self, account: Path) -> None:
        legacy = self.root / MIRROR_FILE
        if not legacy.exists() or (account / MIRROR_FILE).exists():
            return
        for suffix in ("", "-wal", "-shm"):
            source = self.root / (MIRROR_FILE + suffix)
            if source.exists():
                os.replace(source, account / (MIRROR_FILE + suffix))
        legacy_cache = self.root / CACHE_DIR
        if legacy_cache.is_dir():
            for item in legacy_cache.iterdir():
                os.replace(item, account / CACHE_DIR / item.name)
            legacy_cache.rmdir()

    def save(self) -> None:
        """Write server and token to settings.json (atomically, readable by the owner only)."""
        private_dir(self.root)
        data = read_settings(self.root)
        data["server"] = self.server
        data["token"] = str(self.token) if self.token is not None else None
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".settings.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=2)
                fh.write("\n")
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.settings_path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _account_info(folder: Path) -> dict[str, Any]:
    """An account folder's `account.json` ({} when missing or unreadable)."""
    try:
        data = json.loads((folder / ACCOUNT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _opt(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def read_settings(folder: Path) -> dict[str, Any]:
    path = folder / SETTINGS_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ProfileError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ProfileError(f"{path} is not valid JSON ({exc}).") from exc
    if not isinstance(data, dict):
        raise ProfileError(f"{path} must hold a JSON object.")
    return data
