"""A profile: a folder holding settings and one mirror (with its cache) per account.

Layout::

    <profile>/settings.json                   {"server": "http://…", "ca_bundle": "…",
                                               "content_budget_mb": 2048,
                                               "token_stored_in": {…}}: no secret
    <profile>/token                           the token, 0600, only without a keychain
    <profile>/accounts/<key>/account.json     {"server": "http://…", "token": fingerprint}
    <profile>/accounts/<key>/mirror.sqlite3   the SQLite mirror of that account
    <profile>/accounts/<key>/cache/           its artifact bytes, one file per artifact

An account is a server and the principal behind a token (CONTRACT §9.3). The API has no
route that names the principal, so the key is derived from the server and the token: two
tokens of one principal get two mirrors (each fills from the server on its first sync), but
a sync with another account's token can never show or prune this account's rows. Before
accounts, a profile held one `mirror.sqlite3` at its top; the account it belonged to adopts
it when opened or read (`sync.mirror.legacy`: what that profile showed until then).

Every folder here is 0700 and every file 0600, whatever the umask (CONTRACT §10.1, through
`sync.files.private_files`); folders and files an older version left readable are tightened when
the account is opened.

Precedence for the server URL, the token and the CA bundle: explicit argument (`--server`,
`--token`/`--token-file`/`--token-stdin`, `--ca-bundle`), then the environment
(`CONVERGE_SERVER`, `CONVERGE_TOKEN`, `CONVERGE_CA_BUNDLE`), then what the profile saved.
The saved token is in the OS keychain or a 0600 file (`sync.profile.token_store`), never in
`settings.json`; a `settings.json` from before that (with `"token": "…"`) has its token
moved out on the first load.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from platformdirs import user_data_dir

from sync.errors import ProfileError
from sync.files.private_files import (
    PRIVATE_DIR_MODE,
    PRIVATE_FILE_MODE,
    private_dir,
    tighten,
    write_private,
)
from sync.mirror.legacy import belongs_to, connection_identity
from sync.profile import token_store
from sync.profile.token_store import TokenLocation

log = logging.getLogger(__name__)

ENV_SERVER = "CONVERGE_SERVER"
ENV_TOKEN = "CONVERGE_TOKEN"
ENV_CA_BUNDLE = "CONVERGE_CA_BUNDLE"
ENV_PROFILE = "CONVERGE_PROFILE"
SETTINGS_FILE = "settings.json"
#: Mirrored transcripts and cached artifact bytes an account may hold by default: generous,
#: far above what a busy account's transcripts take in the mirror.
DEFAULT_CONTENT_BUDGET = 2048 * 1024 * 1024
MIRROR_FILE = "mirror.sqlite3"
CACHE_DIR = "cache"
ACCOUNTS_DIR = "accounts"
ACCOUNT_FILE = "account.json"
MARKER_KEY = token_store.MARKER_KEY


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


def server_url_problem(url: str) -> str | None:
    """Why `url` cannot name a server, as "not …" (None: it can): an http(s) URL with a host,
    and a port in 1..65535 if it has one. Checked before any request: httpx raises a bare
    ValueError or an exception group for such URLs, deep inside a pass."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        return f"not a valid URL ({exc})"
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or port == 0:
        return "not an http(s) URL with a host (such as http://127.0.0.1:8765)"
    return None


def _same_server(server: str, info: dict[str, Any], *, token_matched: bool) -> bool:
    """Whether an account recorded as `info["server"]` may be `server` under another name:
    the same URL, or the same scheme, port and path on this machine's own names for itself
    (`localhost`, `127.0.0.1`, `::1`; another 127.x address can be another server). A
    recorded identity that is not a URL (the bundled demo server's, whose port changes)
    runs on this machine: it matches a loopback URL, but only for the token it recorded."""
    recorded = str(info.get("server") or "")
    if recorded == normalize_server(server):
        return True
    given = urlsplit(server.strip())
    if not _is_self(given.hostname):
        return False
    if "://" not in recorded:
        return bool(recorded) and token_matched
    other = urlsplit(recorded)
    try:
        ports = (given.port or _DEFAULT_PORTS.get(given.scheme.lower())) == (
            other.port or _DEFAULT_PORTS.get(other.scheme.lower())
        )
    except ValueError:  # a port out of range: not a server this account can be
        return False
    return (
        ports
        and _is_self(other.hostname)
        and given.scheme.lower() == other.scheme.lower()
        and given.path.rstrip("/") == other.path.rstrip("/")
    )


_DEFAULT_PORTS = {"http": 80, "https": 443}
_SELF_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def _is_self(host: str | None) -> bool:
    return (host or "").lower() in _SELF_NAMES


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
    #: A PEM file of CA certificates trusted in addition to the OS trust store (`sync.api.tls`).
    ca_bundle: str | None = None
    #: Where the saved token lives (keychain or file); None when none is saved.
    token_location: TokenLocation | None = field(default=None, compare=False)
    #: Bytes of mirrored transcripts and cached artifacts the account may hold
    #: (`settings.json`'s `content_budget_mb`; `sync.reconcile.content`).
    content_budget: int = DEFAULT_CONTENT_BUDGET

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
        whose token matches, and, when a server is named, only those of that server under
        another loopback name (`localhost` for `127.0.0.1`, the bundled demo server at any
        loopback URL): every stub's token is the same, so a token alone never stands for a
        server; with neither given, every account. One candidate is the answer; none is
        None (nothing mirrored yet); several is a ProfileError: a reader never mixes or
        guesses accounts (CONTRACT §9.3).
        """
        if self.has_account and self.mirror_path.exists():
            return self.mirror_path
        if self.has_account and self._legacy_is_ours():
            self.ensure_dirs()  # adopts it: an upgraded profile shows its rows at once
            return self.mirror_path
        infos = {folder: _account_info(folder) for folder in self.known_accounts()}
        candidates = list(infos)
        if self.token:
            mark = token_fingerprint(str(self.token))
            candidates = [p for p in candidates if infos[p].get("token") == mark]
        if self.server:
            by_token = bool(self.token)
            named = [
                p for p in candidates if _same_server(self.server, infos[p], token_matched=by_token)
            ]
            exact = normalize_server(self.server)
            candidates = [p for p in named if infos[p].get("server") == exact] or named
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
        ca_bundle: str | None = None,
        environ: dict[str, str] | None = None,
    ) -> Profile:
        """Resolve a profile: arguments, then environment, then the saved settings.

        A saved plain-text token (the settings format before the keychain) is moved to the
        keychain or the token file here, and settings.json rewritten without it.
        """
        env = os.environ if environ is None else environ
        folder = Path(root).expanduser() if root is not None else default_profile_dir()
        saved = read_settings(folder)
        saved_token, location = _saved_token(folder, saved)
        resolved_server = server or env.get(ENV_SERVER) or _opt(saved.get("server"))
        resolved_token = token or env.get(ENV_TOKEN) or saved_token
        resolved_ca = ca_bundle or env.get(ENV_CA_BUNDLE) or _opt(saved.get("ca_bundle"))
        return cls(
            root=folder,
            server=resolved_server.rstrip("/") if resolved_server else None,
            token=_Secret(resolved_token) if resolved_token else None,
            ca_bundle=resolved_ca,
            token_location=location,
            content_budget=_budget(saved.get("content_budget_mb")),
        )

    def require_connection(self) -> tuple[str, str]:
        """(server, token), or a ProfileError saying what is missing and how to give it."""
        missing = []
        if not self.server:
            missing.append(f"a server URL (--server or {ENV_SERVER})")
        if not self.token:
            missing.append(f"a token (--token-file, --token-stdin or {ENV_TOKEN})")
        if missing:
            raise ProfileError(
                f"Missing {' and '.join(missing)} for profile {self.root}; "
                f"give them on the command line, in the environment or in {self.settings_path}."
            )
        assert self.server is not None and self.token is not None
        if (problem := server_url_problem(self.server)) is not None:
            raise ProfileError(f"The server URL {self.server} is {problem}.")
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

    @property
    def connection_identity(self) -> str:
        """What this account's mirror records of its server and token (`bind_identity`)."""
        return connection_identity(*self.require_connection())

    def _legacy_is_ours(self) -> bool:
        """A pre-account mirror is in the profile, and it belongs to this account.

        Without a server URL (the bundled demo server's account, named before the server
        has a port) no recorded connection can be this account's: only an unrecorded
        mirror is adopted, and the reader never needs the URL (decision 0103)."""
        legacy = self.root / MIRROR_FILE
        if not legacy.exists():
            return False
        identity = (
            connection_identity(self.server, str(self.token))
            if self.server and self.token
            else None
        )
        return belongs_to(legacy, identity)

    def _adopt_legacy_mirror(self, account: Path) -> None:
        if (account / MIRROR_FILE).exists() or not self._legacy_is_ours():
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

    def save(self) -> Profile:
        """Save server, CA bundle and token: the token in the keychain or the 0600 token
        file (`sync.profile.token_store`), settings.json only a marker saying where. Returns the
        profile with its `token_location`."""
        private_dir(self.root)
        data = read_settings(self.root)
        data["server"] = self.server
        if self.ca_bundle:
            data["ca_bundle"] = self.ca_bundle
        else:
            data.pop("ca_bundle", None)
        data.pop("token", None)
        location: TokenLocation | None = None
        if self.token:
            location = token_store.save_token(self.root, self.server, str(self.token))
            data[MARKER_KEY] = location.marker()
        else:
            token_store.forget_token(self.root, data.pop(MARKER_KEY, None))
        write_settings(self.root, data)
        return replace(self, token_location=location)


def _saved_token(folder: Path, saved: dict[str, Any]) -> tuple[str | None, TokenLocation | None]:
    """The token the profile saved, moving a plain-text one out of settings.json first."""
    plain = _opt(saved.get("token"))
    if plain is None:
        return token_store.load_token(folder, saved.get(MARKER_KEY))
    try:
        location = token_store.save_token(folder, _opt(saved.get("server")), plain)
        migrated = {k: v for k, v in saved.items() if k != "token"}
        migrated[MARKER_KEY] = location.marker()
        write_settings(folder, migrated)
    except (OSError, ProfileError) as exc:  # a read-only profile: use it, move it later
        log.warning("the saved token stays in settings.json for now (%s)", type(exc).__name__)
        return plain, None
    saved.clear()
    saved.update(migrated)
    return plain, location


def write_settings(folder: Path, data: dict[str, Any]) -> None:
    """settings.json, atomically and readable by the owner only (it holds no secret, but
    it says which server and which keychain entry)."""
    token_store.write_private_file(folder / SETTINGS_FILE, json.dumps(data, indent=2) + "\n")


def _account_info(folder: Path) -> dict[str, Any]:
    """An account folder's `account.json` ({} when missing or unreadable)."""
    try:
        data = json.loads((folder / ACCOUNT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _opt(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _budget(saved: object) -> int:
    """The content budget in bytes from its setting in MiB; a missing or unusable value
    (not a positive whole number) is the default."""
    if isinstance(saved, int) and not isinstance(saved, bool) and saved > 0:
        return min(saved, 1 << 30) * 1024 * 1024
    return DEFAULT_CONTENT_BUDGET


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
