"""Crash consistency: SIGKILL the server mid-workload, restart it, audit every session.

A `converge-server` subprocess (SQLite file, then PostgreSQL) serves a few concurrent
clients that create sessions, start runs (`/artifact`, `/remember`, `/approve`, `/wait 1`,
`/fail`, plain echo), decide approvals, cancel runs and delete sessions. At seeded random
moments the process is killed with SIGKILL and started again on the same database and
object store. At the end, with the server up for good, every session ever seen must be

- whole: GET 200, events numbered 1..n without gaps, no run left active (a run interrupted
  by a kill is failed at start-up with a `run.failed` event), every run terminal with
  exactly one terminal event, its last; every run whose start was acknowledged (202) present;
- or purged: GET 404 `deleted`, residue all zero, no byte object, a tombstone of exactly
  the four columns.

Then every surviving session is deleted (none may be refused: nothing stays active), the
same audit runs again, maintenance drains the outbox to zero, and the object store holds no
file at all (no orphan bytes, no `.tmp` leftovers).

`CONVERGE_CRASH_ROUNDS` (kills per database, default 3) and `CONVERGE_CRASH_SEED` make a
longer or different run; the figures of each run are printed (`pytest -s`).
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import PostgresCluster
from tests.reliability.crash_helpers import ServerProcess, byte_objects

TOKENS = ("dev-alice", "dev-bob", "dev-carol")
TERMINAL = {"completed", "failed", "cancelled"}
ROUNDS = int(os.environ.get("CONVERGE_CRASH_ROUNDS", "3"))
SEED = int(os.environ.get("CONVERGE_CRASH_SEED", "20261130"))
PROMPTS = (
    "hello there",
    "/artifact notes.txt some bytes worth keeping",
    "/artifact second.txt more bytes",
    "/remember the sky is blue",
    "/remember tea without sugar",
    "/approve shell",
    "/wait 1",
    "/fail",
    "/skill summarise",
)
TOMBSTONE_COLUMNS = ["deleted_at", "principal", "session_id", "tenant"]


def message(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


@dataclass
class Ledger:
    """What the clients were told, across every round (shared by the worker threads)."""

    sessions: dict[str, str] = field(default_factory=dict)  # session id -> token
    acked_runs: dict[str, str] = field(default_factory=dict)  # run id -> session id (202)
    deletes_tried: int = 0
    deletes_acked: int = 0  # 204 / 404 answered
    deletes_refused: int = 0  # 409
    runs_tried: int = 0
    transport_errors: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class Worker(threading.Thread):
    """One client: a token, a seeded RNG, and a loop of random operations until `stop`."""

    def __init__(self, url: str, token: str, rng: random.Random, ledger: Ledger) -> None:
        super().__init__(daemon=True, name=f"crash-worker-{token}")
        self.url = url
        self.token = token
        self.rng = rng
        self.ledger = ledger
        self.stop = threading.Event()
        self.mine = [sid for sid, tok in ledger.sessions.items() if tok == token]
        self.failure: BaseException | None = None

    def run(self) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        with httpx.Client(base_url=self.url, headers=headers, timeout=5.0) as client:
            while not self.stop.is_set():
                try:
                    self.step(client)
                except httpx.TransportError:
                    with self.ledger.lock:
                        self.ledger.transport_errors += 1
                    self.stop.wait(0.02)  # the server is down: back off until told to stop
                except BaseException as exc:  # surfaced by the test, not lost in a thread
                    self.failure = exc
                    return

    def step(self, client: httpx.Client) -> None:
        r = self.rng.random()
        if not self.mine or r < 0.15:
            resp = client.post("/v1/sessions", json={})
            assert resp.status_code == 201, resp.text
            sid = resp.json()["id"]
            with self.ledger.lock:
                self.ledger.sessions[sid] = self.token
            self.mine.append(sid)
            return
        sid = self.rng.choice(self.mine)
        if r < 0.6:
            with self.ledger.lock:
                self.ledger.runs_tried += 1
            resp = client.post(
                f"/v1/sessions/{sid}/runs", json={"input": message(self.rng.choice(PROMPTS))}
            )
            if resp.status_code == 202:
                with self.ledger.lock:
                    self.ledger.acked_runs[resp.json()["id"]] = sid
            else:
                assert resp.status_code in (404, 409), resp.text
        elif r < 0.72:
            self.decide(client, sid)
        elif r < 0.8:
            resp = client.get(f"/v1/sessions/{sid}")
            if resp.status_code == 200 and resp.json()["active_run_id"]:
                cancel = client.post(f"/v1/runs/{resp.json()['active_run_id']}/cancel")
                assert cancel.status_code in (202, 404), cancel.text
        else:
            with self.ledger.lock:
                self.ledger.deletes_tried += 1
            resp = client.delete(f"/v1/sessions/{sid}")
            assert resp.status_code in (204, 404, 409), resp.text
            with self.ledger.lock:
                if resp.status_code == 409:
                    self.ledger.deletes_refused += 1
                else:
                    self.ledger.deletes_acked += 1
            if resp.status_code != 409:
                self.mine.remove(sid)

    def decide(self, client: httpx.Client, sid: str) -> None:
        resp = client.get(f"/v1/sessions/{sid}/events", params={"limit": 1000})
        if resp.status_code != 200:
            return
        requested, resolved = set(), set()
        for ev in resp.json()["items"]:
            if ev["type"] == "approval.requested":
                requested.add(ev["data"]["approval_id"])
            elif ev["type"] == "approval.resolved":
                resolved.add(ev["data"]["approval_id"])
        for approval_id in sorted(requested - resolved):
            decision = self.rng.choice(("approve", "deny"))
            answer = client.post(
                f"/v1/approvals/{approval_id}/decision", json={"decision": decision}
            )
            assert answer.status_code in (200, 404, 409), answer.text


@dataclass
class Figures:
    kills: int = 0
    starts: int = 0
    sessions: int = 0
    whole: int = 0
    purged: int = 0
    runs_checked: int = 0
    recovered_runs: int = 0
    final_deletes: int = 0


def all_events(client: httpx.Client, sid: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    after: int | None = None
    while True:
        params: dict[str, Any] = {"limit": 1000}
        if after is not None:
            params["after"] = after
        resp = client.get(f"/v1/sessions/{sid}/events", params=params)
        assert resp.status_code == 200, resp.text
        page = resp.json()
        items.extend(page["items"])
        after = page["next_after"]
        if after is None:
            return items


def index_ids(client: httpx.Client) -> set[str]:
    """Every session id of the caller's complete index (a full keyset walk)."""
    ids: set[str] = set()
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 200}
        if cursor:
            params["cursor"] = cursor
        resp = client.get("/v1/sessions", params=params)
        assert resp.status_code == 200, resp.text
        page = resp.json()
        ids.update(item["id"] for item in page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            return ids


def assert_purged(control: httpx.Client, client: httpx.Client, sid: str, drained: bool) -> None:
    """Purged: 404 `deleted`, no row, a four-column tombstone; byte objects only while their
    locators still wait in the outbox (a kill between the commit and the byte delete), none
    once maintenance has `drained` it."""
    resp = client.get(f"/v1/sessions/{sid}")
    assert resp.status_code == 404, resp.text
    assert resp.json()["error"]["details"] == {"reason": "deleted"}, resp.text
    audit = control.get(f"/_stub/sessions/{sid}/residue").json()
    leftovers = {table: n for table, n in audit["rows"].items() if n}
    assert not leftovers, f"{sid}: rows left after purge: {leftovers}"
    assert audit["objects"] <= audit["outbox"], f"{sid}: orphan byte objects: {audit}"
    if drained:
        assert audit["objects"] == audit["outbox"] == 0, f"{sid}: not drained: {audit}"
    assert audit["tombstone"] is True, sid
    assert sorted(audit["tombstone_columns"]) == TOMBSTONE_COLUMNS, audit


def assert_whole(
    client: httpx.Client, sid: str, view: dict[str, Any], ledger: Ledger, figures: Figures
) -> None:
    """Events 1..n, no active run, each run terminal with one terminal event, its last."""
    assert view["active_run_id"] is None, f"{sid}: run {view['active_run_id']} still active"
    events = all_events(client, sid)
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1)), sid
    by_run: dict[str, list[dict[str, Any]]] = {}
    for ev in events:
        assert ev["session_id"] == sid
        if ev["run_id"] is not None:
            by_run.setdefault(ev["run_id"], []).append(ev)
    for run_id, run_events in by_run.items():
        run = client.get(f"/v1/runs/{run_id}")
        assert run.status_code == 200, run.text
        status = run.json()["status"]
        assert status in TERMINAL, f"{run_id} is {status}"
        types = [e["type"] for e in run_events]
        assert types[0] == "run.started", (run_id, types)
        assert types[-1] == f"run.{status}", (run_id, types)
        assert sum(t in {"run.completed", "run.failed", "run.cancelled"} for t in types) == 1
        if status == "failed" and run_events[-1]["data"].get("error", "").startswith("interrupted"):
            figures.recovered_runs += 1
        figures.runs_checked += 1
    acked = {run for run, owner in ledger.acked_runs.items() if owner == sid}
    missing = acked - set(by_run)
    assert not missing, f"{sid}: acknowledged runs lost: {missing}"
    if view["last_run_id"] is not None:
        assert view["last_run_id"] in by_run


def audit_all(url: str, ledger: Ledger, figures: Figures, *, drained: bool = False) -> list[str]:
    """Check every session ever seen; returns the ids of the whole (live) ones."""
    live: list[str] = []
    figures.whole = figures.purged = 0
    with httpx.Client(base_url=url, timeout=30.0) as control:
        for token in TOKENS:
            headers = {"Authorization": f"Bearer {token}"}
            with httpx.Client(base_url=url, headers=headers, timeout=30.0) as client:
                seen = {sid for sid, tok in ledger.sessions.items() if tok == token}
                indexed = index_ids(client)
                for sid in indexed - seen:  # created, but the 201 was lost in a kill
                    ledger.sessions[sid] = token
                for sid in sorted(seen | indexed):
                    resp = client.get(f"/v1/sessions/{sid}")
                    if resp.status_code == 200:
                        assert sid in indexed, f"{sid} answers 200 but is not in the index"
                        assert_whole(client, sid, resp.json(), ledger, figures)
                        figures.whole += 1
                        live.append(sid)
                    else:
                        assert sid not in indexed, f"{sid} is listed but answers {resp}"
                        assert_purged(control, client, sid, drained)
                        figures.purged += 1
    figures.sessions = len(ledger.sessions)
    return live


def crash_rounds(server: ServerProcess, ledger: Ledger, rounds: int, seed: int) -> None:
    """`rounds` times: start, run the workers for a seeded moment, SIGKILL mid-flight."""
    rng = random.Random(seed)
    for round_no in range(rounds):
        url = server.start()
        workers = [Worker(url, token, random.Random(rng.random()), ledger) for token in TOKENS]
        for worker in workers:
            worker.start()
        # The kill moment: a seeded delay after the workers start (runs are mid-flight).
        threading.Event().wait(rng.uniform(0.3, 1.2))
        server.kill()
        for worker in workers:
            worker.stop.set()
        for worker in workers:
            worker.join(timeout=30)
            assert not worker.is_alive(), f"{worker.name} hung in round {round_no}"
            if worker.failure is not None:
                raise AssertionError(f"round {round_no}: {worker.name}") from worker.failure


def crash_scenario(database_url: str, tmp_path: Path, label: str) -> Figures:
    artifacts = tmp_path / "objects"
    server = ServerProcess(
        database_url=database_url,
        artifacts=artifacts,
        log_path=tmp_path / "server.log",
        agent_delay=0.02,
    )
    ledger = Ledger()
    figures = Figures()
    started = time.monotonic()
    try:
        crash_rounds(server, ledger, ROUNDS, SEED)
        url = server.start()  # the last start: recovery, then the audit
        live = audit_all(url, ledger, figures)
        headers = {"Authorization": "Bearer "}
        with httpx.Client(base_url=url, timeout=30.0) as control:
            for sid in live:
                headers["Authorization"] = f"Bearer {ledger.sessions[sid]}"
                resp = control.delete(f"/v1/sessions/{sid}", headers=headers)
                assert resp.status_code == 204, f"delete {sid}: {resp.status_code} {resp.text}"
                figures.final_deletes += 1
            pending = control.post("/_stub/maintenance", json={}).json()["outbox_pending"]
            assert pending == 0
            whole_before = figures.whole
            audit_all(url, ledger, figures, drained=True)
            assert figures.whole == 0
            figures.whole = whole_before
        leftovers = byte_objects(artifacts)
        assert not leftovers, f"orphan byte objects: {leftovers}"
        assert server.stop() == 0
    except BaseException:
        log = server.log_path.read_text(errors="replace") if server.log_path.exists() else ""
        print(f"\n[crash {label}] server log tail:\n{log[-6000:]}")
        raise
    finally:
        server.stop()
        figures.kills, figures.starts = server.kills, server.starts
    print(
        f"\n[crash {label}] seed={SEED} kills={figures.kills} starts={figures.starts} "
        f"sessions={figures.sessions} whole={figures.whole} purged={figures.purged} "
        f"runs_acked={len(ledger.acked_runs)} runs_tried={ledger.runs_tried} "
        f"runs_checked={figures.runs_checked} recovered_runs={figures.recovered_runs} "
        f"deletes_tried={ledger.deletes_tried} deletes_acked={ledger.deletes_acked} "
        f"deletes_409={ledger.deletes_refused} final_deletes={figures.final_deletes} "
        f"transport_errors={ledger.transport_errors} "
        f"seconds={time.monotonic() - started:.1f}"
    )
    return figures


def test_sqlite_sessions_are_whole_or_purged_after_sigkills(tmp_path: Path) -> None:
    figures = crash_scenario(f"sqlite:///{tmp_path / 'server.sqlite3'}", tmp_path, "sqlite")
    assert figures.kills == ROUNDS
    assert figures.sessions > 0


@pytest.fixture
def pg_url(postgres_cluster: PostgresCluster) -> Iterator[str]:
    yield postgres_cluster.new_database()


@pytest.mark.postgres
def test_postgres_sessions_are_whole_or_purged_after_sigkills(pg_url: str, tmp_path: Path) -> None:
    figures = crash_scenario(pg_url, tmp_path, "postgres")
    assert figures.kills == ROUNDS
    assert figures.sessions > 0


def test_restart_removes_bytes_a_crash_left_without_metadata(tmp_path: Path) -> None:
    """The window the SIGKILL runs found on PostgreSQL, made deterministic: bytes stored but
    their artifact row never committed (and a half-written `.tmp`) leave at the next start,
    while the bytes of a recorded artifact stay readable."""
    artifacts = tmp_path / "objects"
    server = ServerProcess(
        database_url=f"sqlite:///{tmp_path / 'server.sqlite3'}",
        artifacts=artifacts,
        log_path=tmp_path / "server.log",
    )
    try:
        url = server.start()
        headers = {"Authorization": "Bearer dev-alice"}
        with httpx.Client(base_url=url, headers=headers, timeout=30.0) as client:
            sid = client.post("/v1/sessions", json={}).json()["id"]
            run = client.post(
                f"/v1/sessions/{sid}/runs", json={"input": message("/artifact kept.txt keep me")}
            ).json()["id"]
            deadline = time.monotonic() + 30
            while client.get(f"/v1/runs/{run}").json()["status"] not in TERMINAL:
                assert time.monotonic() < deadline, "run did not finish"
                threading.Event().wait(0.02)
            events = all_events(client, sid)
        (artifact_id,) = [
            e["data"]["artifact_id"] for e in events if e["type"] == "artifact.created"
        ]
        server.kill()
        (artifacts / sid / "art_orphan0000000000000").write_bytes(b"never recorded")
        (artifacts / sid / "art_orphan0000000000001.tmp").write_bytes(b"half")
        (artifacts / "ses_gone00000000000000").mkdir()
        (artifacts / "ses_gone00000000000000" / "art_x").write_bytes(b"no session")
        url = server.start()
        with httpx.Client(base_url=url, headers=headers, timeout=30.0) as client:
            content = client.get(f"/v1/artifacts/{artifact_id}/content")
            assert content.status_code == 200
            assert content.content == b"keep me"
        assert byte_objects(artifacts) == [artifacts / sid / artifact_id]
    finally:
        server.stop()
