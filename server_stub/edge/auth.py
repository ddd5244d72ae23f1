"""Bearer tokens → `Principal(tenant, principal, scopes)`, and the scope check.

Checks run in the contract's order inside every route: `authenticate` (401) then
`require` (403), before the request's syntax is looked at.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from starlette.requests import Request

from server_stub.config import PrincipalEntry
from server_stub.edge.errors import ApiError

ALL_SCOPES: frozenset[str] = frozenset(
    {
        "session.read",
        "session.write",
        "run.read",
        "run.write",
        "run.cancel",
        "approval.write",
        "artifact.read",
        "memory.read",
        "memory.write",
        "knowledge.read",
        "skill.read",
    }
)
READ_SCOPES = frozenset(s for s in ALL_SCOPES if s.endswith(".read"))

DEV_PRINCIPALS: tuple[PrincipalEntry, ...] = (
    PrincipalEntry("dev-alice", "acme", "alice", ALL_SCOPES),
    PrincipalEntry("dev-bob", "acme", "bob", ALL_SCOPES),
    PrincipalEntry("dev-carol", "globex", "carol", ALL_SCOPES),
    PrincipalEntry("dev-alice-readonly", "acme", "alice", READ_SCOPES),
)


@dataclass(frozen=True)
class Principal:
    """Who is calling: the owner key of every session, plus what they may do."""

    tenant: str
    principal: str
    scopes: frozenset[str]


def _expand(scopes: Iterable[str]) -> frozenset[str]:
    items = set(scopes)
    if "*" in items:
        return ALL_SCOPES
    return frozenset(items)


def load_principals(path: Path) -> tuple[PrincipalEntry, ...]:
    """Read a `--principals` TOML file (`[[principal]]` tables); ValueError when malformed."""
    with path.open("rb") as fh:
        doc = tomllib.load(fh)
    entries = []
    for item in doc.get("principal", []):
        try:
            entries.append(
                PrincipalEntry(
                    token=str(item["token"]),
                    tenant=str(item["tenant"]),
                    principal=str(item["principal"]),
                    scopes=_expand(str(s) for s in item.get("scopes", [])),
                )
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed principal entry in {path}: {item!r}") from exc
    if not entries:
        raise ValueError(f"no [[principal]] entries in {path}")
    return tuple(entries)


UNAUTHENTICATED = ApiError(401, "missing or unknown bearer token")


class TokenTable:
    """The tokens the server accepts."""

    def __init__(self, entries: Iterable[PrincipalEntry]) -> None:
        self._by_token: Mapping[str, Principal] = {
            e.token: Principal(e.tenant, e.principal, _expand(e.scopes)) for e in entries
        }

    def lookup(self, token: str) -> Principal | None:
        """The principal a raw token stands for, if any."""
        return self._by_token.get(token)

    def authenticate(self, request: Request) -> Principal:
        """The caller, or 401."""
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise UNAUTHENTICATED
        principal = self._by_token.get(token.strip())
        if principal is None:
            raise UNAUTHENTICATED
        return principal

    def require(self, request: Request, scope: str) -> Principal:
        """The caller if it holds `scope`: 401, then 403 with `details.required_scope`."""
        principal = self.authenticate(request)
        if scope not in principal.scopes:
            raise ApiError(403, "missing scope", {"required_scope": scope})
        return principal
