"""A profile: one server + one principal, as a folder holding settings, mirror and cache.

Layout::

    <profile>/settings.json     {"server": "http://…", "token": "…"}
    <profile>/mirror.sqlite3    the SQLite mirror (sync.mirror)
    <profile>/cache/            artifact bytes, one file per artifact id

Precedence for the server URL and the token: explicit argument (`--server`, `--token`),
then the environment (`CONVERGE_SERVER`, `CONVERGE_TOKEN`), then `settings.json`.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from platformdirs import user_data_dir

from sync.errors import ProfileError

ENV_SERVER = "CONVERGE_SERVER"
ENV_TOKEN = "CONVERGE_TOKEN"
ENV_PROFILE = "CONVERGE_PROFILE"
SETTINGS_FILE = "settings.json"
MIRROR_FILE = "mirror.sqlite3"
CACHE_DIR = "cache"


def default_profile_dir() -> Path:
    """`$CONVERGE_PROFILE`, else `<user data dir>/converge/profiles/default`."""
    env = os.environ.get(ENV_PROFILE)
    if env:
        return Path(env).expanduser()
    return Path(user_data_dir("converge", appauthor=False)) / "profiles" / "default"


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

    @property
    def settings_path(self) -> Path:
        return self.root / SETTINGS_FILE

    @property
    def mirror_path(self) -> Path:
        return self.root / MIRROR_FILE

    @property
    def cache_dir(self) -> Path:
        return self.root / CACHE_DIR

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
        self.root.mkdir(parents=True, exist_ok=True)
        self.cache_dir.mkdir(parents=True, exist_ok=True)

    def save(self) -> None:
        """Write server and token to settings.json (atomically, readable by the owner only)."""
        self.root.mkdir(parents=True, exist_ok=True)
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
