"""The invariant checker of `converge qa`: a pure function from a recorded history to violations.

Why pure: the harness records what happened (what each device's mirror showed and when, what
each device removed and why, every delete attempt, the server's final truth) and this module
alone decides whether that history breaks ADR-0050 §8 / CONTRACT §7. Keeping the decision out
of the driver means it can be fed fabricated histories in tests, so a checker that never
complains is itself caught.

The invariants:

- convergence: after the quiet phase every mirror equals the server's index (ids, order,
  titles, and the other SessionView fields);
- no reappearance: once a device has observed a deleted session's absence (it removed the
  row, or a mirror sample lacked a row it had shown before), the session never shows up
  there again;
- no live prune: a device never removes a session that was live at that moment (one the
  server still has at the end, one removed before any delete of it had been sent, or one
  for which the server keeps no deletion tombstone);
- a refused delete (409) keeps the row on the device and the session on the server; a
  failed delete (network error, 5xx) keeps the row;
- the server never serves a session whose delete it confirmed;
- the deletion outbox drains once the object store is back; a deleted session leaves no
  residue (rows, objects, outbox entries) and keeps its tombstone (both through the control
  plane, when the server has one); through the public routes, every route answers the
  plain 404 for what a deleted session held, and route 3 shows its tombstone;
- no operation hangs (each has a deadline; one that outlives it is reported).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from sync.wire.models import SessionView


class Source(Enum):
    """Where an observation of a device's mirror came from."""

    INSERTED = "inserted"  # a pull of the device's mirror found the id new to its view
    UPDATED = "updated"  # ... changed in it
    PRUNED = "pruned"  # a reconcile pass removed it (point read answered 404)
    DELETED = "deleted"  # the device's own server-first delete removed it (204/404)
    REFRESHED_AWAY = "refreshed_away"  # a single-row refresh got 404 and removed it
    REMOVED = "removed"  # a pull found it removed before the write's event told why
    SAMPLE = "sample"  # the harness read the mirror

    @property
    def is_removal(self) -> bool:
        return self in (Source.PRUNED, Source.DELETED, Source.REFRESHED_AWAY, Source.REMOVED)


@dataclass(frozen=True)
class Observation:
    """What one device's mirror showed about one session at one moment.

    `seq` orders observations of the whole run (a sample or a pull of what changed takes
    its number before it reads the mirror, one read at a time per device), `at` is
    `time.monotonic()`.
    """

    seq: int
    at: float
    device: int
    session_id: str
    present: bool
    source: Source


class DeleteResult(Enum):
    DELETED = "deleted"  # 204
    ALREADY_GONE = "already_gone"  # 404
    ACTIVE_RUN = "active_run"  # 409
    FAILED = "failed"  # never sent, or refused (connection refused, 5xx, ...)
    UNCONFIRMED = "unconfirmed"  # sent, answer lost (a cut or dropped connection)


@dataclass(frozen=True)
class DeleteAttempt:
    """One delete sent by one device, with what the harness saw around it."""

    session_id: str
    device: int
    sent_at: float
    done_at: float
    result: DeleteResult
    row_before: bool  # the device's mirror had the row just before the delete
    row_after: bool  # ... just after it returned
    server_has_after: bool | None = None  # for a 409: did a fresh point read still find it?


@dataclass(frozen=True)
class RowKey:
    """The part of a SessionView that a mirror must reproduce."""

    id: str
    title: str | None
    updated_at: str
    active_run_id: str | None = None
    last_run_id: str | None = None
    created_at: str = ""

    @classmethod
    def of(cls, row: SessionView) -> RowKey:
        """The key of a session row (the server's index and the mirrors hold the same type)."""
        return cls(
            id=row.id,
            title=row.title,
            updated_at=row.updated_at,
            active_run_id=row.active_run_id,
            last_run_id=row.last_run_id,
            created_at=row.created_at,
        )


@dataclass(frozen=True)
class Residue:
    """A deleted session's purge audit (`GET /_stub/sessions/{id}/residue`), summarised."""

    rows: int  # rows still referring to the session, over every audited table
    objects: int
    outbox: int
    tombstone: bool


@dataclass
class History:
    """Everything the harness recorded; the checker's only input."""

    devices: int
    observations: list[Observation] = field(default_factory=list)
    deletes: list[DeleteAttempt] = field(default_factory=list)
    server_index: list[RowKey] = field(default_factory=list)  # the final truth, in order
    mirrors: dict[int, list[RowKey]] = field(default_factory=dict)  # final, in sidebar order
    converged_after: dict[int, float | None] = field(default_factory=dict)
    deadline: float = 0.0
    outbox_pending: int | None = None
    residue: dict[str, Residue] = field(default_factory=dict)
    stuck: list[str] = field(default_factory=list)  # operations that outlived their deadline
    tombstones: dict[str, bool] = field(default_factory=dict)  # removed id -> server has one
    #: (session id, what) for each route that still serves something of a deleted session
    #: (`qa.public.PublicAudit`); an empty session id: the audit itself could not read a list.
    leftovers: list[tuple[str, str]] = field(default_factory=list)


class Kind(Enum):
    NOT_CONVERGED = "not_converged"
    REAPPEARED = "reappeared"
    LIVE_PRUNED = "live_pruned"
    CONFLICT_LOST_ROW = "conflict_lost_row"
    CONFLICT_DELETED = "conflict_deleted"
    FAILED_DELETE_LOST_ROW = "failed_delete_lost_row"
    DELETED_STILL_SERVED = "deleted_still_served"
    OUTBOX_NOT_DRAINED = "outbox_not_drained"
    RESIDUE = "residue"
    STUCK = "stuck"


@dataclass(frozen=True)
class Violation:
    kind: Kind
    detail: str
    device: int | None = None
    session_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "device": self.device,
            "session_id": self.session_id,
            "detail": self.detail,
        }

    def __str__(self) -> str:
        where = f"device {self.device}: " if self.device is not None else ""
        return f"{self.kind.value}: {where}{self.detail}"


def check(history: History) -> list[Violation]:
    """Every violation the history shows, in a stable order (by kind, device, session)."""
    violations: list[Violation] = []
    violations += check_convergence(history)
    live_ids = {row.id for row in history.server_index}
    violations += check_reappearance(history.observations, history.deletes, live_ids)
    violations += check_live_prunes(history.observations, history.deletes, live_ids)
    violations += check_tombstones(history.tombstones, live_ids)
    violations += check_delete_outcomes(history.deletes, live_ids)
    violations += check_outbox(history.outbox_pending)
    violations += check_residue(history.residue)
    violations += [
        Violation(Kind.RESIDUE, f"deleted {sid} is still served: {what}", None, sid or None)
        if sid
        else Violation(Kind.RESIDUE, f"the purge audit could not finish: {what}")
        for sid, what in history.leftovers
    ]
    violations += [Violation(Kind.STUCK, what) for what in history.stuck]
    return violations


def check_convergence(history: History) -> list[Violation]:
    """Every device's final mirror equals the server's final index, field for field."""
    out: list[Violation] = []
    for device in range(history.devices):
        mirror = history.mirrors.get(device)
        if mirror is None:
            out.append(Violation(Kind.NOT_CONVERGED, "no final mirror was read", device))
            continue
        diff = describe_difference(history.server_index, mirror)
        if diff is None:
            continue
        out.append(
            Violation(
                Kind.NOT_CONVERGED,
                f"did not converge within {history.deadline:g}s: {diff}",
                device,
            )
        )
    return out


def describe_difference(server: Sequence[RowKey], mirror: Sequence[RowKey]) -> str | None:
    """None when equal; else a short account: missing, extra, changed fields, order."""
    if list(server) == list(mirror):
        return None
    by_id_server = {row.id: row for row in server}
    by_id_mirror = {row.id: row for row in mirror}
    parts: list[str] = []
    missing = [sid for sid in by_id_server if sid not in by_id_mirror]
    extra = [sid for sid in by_id_mirror if sid not in by_id_server]
    if missing:
        parts.append(f"{len(missing)} missing ({_ids(missing)})")
    if extra:
        parts.append(f"{len(extra)} extra ({_ids(extra)})")
    changed = [
        sid for sid, row in by_id_server.items() if sid in by_id_mirror and by_id_mirror[sid] != row
    ]
    if changed:
        fields = sorted(
            {
                name
                for sid in changed
                for name in ("title", "updated_at", "active_run_id", "last_run_id", "created_at")
                if getattr(by_id_server[sid], name) != getattr(by_id_mirror[sid], name)
            }
        )
        parts.append(f"{len(changed)} differ in {', '.join(fields)} ({_ids(changed)})")
    if not parts:
        parts.append("same rows in a different order")
    elif [r.id for r in server if r.id in by_id_mirror] != [
        r.id for r in mirror if r.id in by_id_server
    ]:
        parts.append("order differs")
    return "; ".join(parts)


def _ids(ids: Sequence[str], shown: int = 3) -> str:
    more = f", +{len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more


def _by_device_and_session(
    observations: Iterable[Observation],
) -> dict[tuple[int, str], list[Observation]]:
    grouped: dict[tuple[int, str], list[Observation]] = defaultdict(list)
    for obs in observations:
        grouped[(obs.device, obs.session_id)].append(obs)
    for items in grouped.values():
        items.sort(key=lambda o: o.seq)
    return grouped


def check_reappearance(
    observations: Iterable[Observation],
    deletes: Sequence[DeleteAttempt],
    live_ids: set[str],
) -> list[Violation]:
    """A deleted session must never show up again on a device that observed its absence.

    A device observes the absence when it removes the row (every removal needs the server's
    confirmation), or when a sample lacks a row the device had shown before (it can only have
    gone through a removal). A device that never had the row has observed nothing: a walk
    that started before the delete may still show it once, which ADR-0050 accepts.
    """
    out: list[Violation] = []
    candidates = {d.session_id for d in deletes} - live_ids
    for (device, sid), items in sorted(_by_device_and_session(observations).items()):
        if sid not in candidates:
            continue
        had = False
        gone_at: Observation | None = None
        for obs in items:
            if obs.present:
                if gone_at is not None:
                    out.append(
                        Violation(
                            Kind.REAPPEARED,
                            f"{sid} came back ({obs.source.value}) after the device observed "
                            f"its deletion ({gone_at.source.value})",
                            device,
                            sid,
                        )
                    )
                    break
                had = True
            elif gone_at is None and (obs.source.is_removal or had):
                gone_at = obs
    return out


def earliest_delete_sent(deletes: Iterable[DeleteAttempt]) -> dict[str, float]:
    """Per session, when the first delete that may have removed it was sent (409s excluded:
    they prove nothing was deleted)."""
    earliest: dict[str, float] = {}
    for attempt in deletes:
        if attempt.result is DeleteResult.ACTIVE_RUN:
            continue
        prior = earliest.get(attempt.session_id)
        if prior is None or attempt.sent_at < prior:
            earliest[attempt.session_id] = attempt.sent_at
    return earliest


def check_live_prunes(
    observations: Iterable[Observation],
    deletes: Sequence[DeleteAttempt],
    live_ids: set[str],
) -> list[Violation]:
    """A removal is legitimate only for a session that was gone from the server by then."""
    out: list[Violation] = []
    earliest = earliest_delete_sent(deletes)
    for obs in sorted(observations, key=lambda o: o.seq):
        if obs.present or not obs.source.is_removal:
            continue
        sid = obs.session_id
        if sid in live_ids:
            out.append(
                Violation(
                    Kind.LIVE_PRUNED,
                    f"{sid} was removed ({obs.source.value}) but the server still has it",
                    obs.device,
                    sid,
                )
            )
        elif sid in earliest and obs.at < earliest[sid]:
            out.append(
                Violation(
                    Kind.LIVE_PRUNED,
                    f"{sid} was removed ({obs.source.value}) "
                    f"{earliest[sid] - obs.at:.3f}s before any delete of it was sent",
                    obs.device,
                    sid,
                )
            )
    return out


def check_tombstones(tombstones: Mapping[str, bool], live_ids: set[str]) -> list[Violation]:
    """Every session a device removed must be one the server records as deleted."""
    return [
        Violation(
            Kind.LIVE_PRUNED,
            f"{sid} was removed by a device but the server has no tombstone for it",
            None,
            sid,
        )
        for sid, has in sorted(tombstones.items())
        if not has and sid not in live_ids  # a live one is reported by check_live_prunes
    ]


def check_delete_outcomes(deletes: Sequence[DeleteAttempt], live_ids: set[str]) -> list[Violation]:
    """409 keeps row and session; a failed delete keeps the row; a confirmed delete sticks."""
    out: list[Violation] = []
    confirmed: set[str] = set()
    for attempt in deletes:
        sid, device = attempt.session_id, attempt.device
        if attempt.result is DeleteResult.ACTIVE_RUN:
            if attempt.row_before and not attempt.row_after:
                out.append(
                    Violation(
                        Kind.CONFLICT_LOST_ROW,
                        f"the delete of {sid} was refused (409) but the row left the mirror",
                        device,
                        sid,
                    )
                )
            if attempt.server_has_after is False:
                out.append(
                    Violation(
                        Kind.CONFLICT_DELETED,
                        f"the delete of {sid} was refused (409) but the server lost it",
                        device,
                        sid,
                    )
                )
        elif attempt.result in (DeleteResult.FAILED, DeleteResult.UNCONFIRMED):
            if attempt.row_before and not attempt.row_after:
                out.append(
                    Violation(
                        Kind.FAILED_DELETE_LOST_ROW,
                        f"the delete of {sid} failed but the row left the mirror",
                        device,
                        sid,
                    )
                )
        elif attempt.result is DeleteResult.DELETED:
            confirmed.add(sid)
    for sid in sorted(confirmed & live_ids):
        out.append(
            Violation(
                Kind.DELETED_STILL_SERVED,
                f"{sid} was deleted (204) but the server's index still lists it",
                None,
                sid,
            )
        )
    return out


def check_outbox(pending: int | None) -> list[Violation]:
    if pending is None or pending == 0:
        return []
    return [
        Violation(
            Kind.OUTBOX_NOT_DRAINED,
            f"{pending} byte deletes still queued after maintenance with the store up",
        )
    ]


def check_residue(residue: Mapping[str, Residue]) -> list[Violation]:
    out: list[Violation] = []
    for sid, audit in sorted(residue.items()):
        problems = []
        if audit.rows:
            problems.append(f"{audit.rows} rows")
        if audit.objects:
            problems.append(f"{audit.objects} objects")
        if audit.outbox:
            problems.append(f"{audit.outbox} outbox entries")
        if not audit.tombstone:
            problems.append("no tombstone")
        if problems:
            out.append(
                Violation(Kind.RESIDUE, f"deleted {sid} left {', '.join(problems)}", None, sid)
            )
    return out
