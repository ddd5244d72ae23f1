"""`python -m bench server`: the session index and DELETE of the stub server, measured.

What it does, in one run against one fresh database (a SQLite file in a temp dir unless
`--database` names another, empty one):

1. seeds the measured principal's N sessions beside N sessions of other principals
   (bulk inserts, `bench.server_seed`; not measured, just reported);
2. starts the real server (`server_stub.runner.ServerThread`: uvicorn on loopback) and talks
   to it with one keep-alive `httpx.Client`;
3. list latency of the first page (limit 50) and of pages at 10 %, 50 % and 99 % depth
   (10k/50k/99k for the default 100,000), over HTTP. The cursor for a depth is minted with
   the server's own cursor module (`CursorCodec` with the database's key), from the
   position that an `OFFSET` query finds, and each keyset page is checked to hold exactly
   the same ids as the `OFFSET` page. Beside the HTTP figures: the keyset query alone and
   the `OFFSET` query alone, as SQL through the same engine, timed in process;
4. the full walk of the index at limit 200, over HTTP, checking that every session appears
   exactly once;
5. DELETE latency: typical sessions (made through the API: one run of the scripted agent,
   so a handful of events, a checkpoint, a projection, a recall trace), and big sessions
   (10,000 events, 100 artifacts with their object-store files and knowledge documents),
   each purge verified afterwards with the control plane's residue audit;
6. the floor (`bench.floor`): the same database served by a `converge-server` child process
   beside a minimal Starlette app answering the same bytes, over raw keep-alive sockets,
   interleaved: the first page and its 304 as ratios to the floor, the DELETE of a typical
   session as a ratio to the floor's 304, and throughput with 1 and 32 clients with the
   server's CPU per request. `--floor-only` skips 3-5;
   `--postgres` runs everything on a throwaway PostgreSQL cluster.

Samples of the different pages are interleaved round by round, so that drift on a busy
machine hits every column alike.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import platform
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import func, select, text

from bench import floor, report
from bench.child_server import start_server
from bench.server_seed import MEASURED, IdMaker, seed_big_session, seed_index
from bench.throwaway_pg import throwaway_postgres
from server_stub.config import ServerSettings
from server_stub.db.engine import Database
from server_stub.db.models import SessionRow
from server_stub.domain.cursors import CursorCodec, Position
from server_stub.domain.scrub import purged_tables
from server_stub.runner import ServerThread
from server_stub.storage.objectstore import FilesystemObjectStore

log = logging.getLogger(__name__)

PAGE = 50
WALK_PAGE = 200
DEPTH_FRACTIONS = (0.10, 0.50, 0.99)

TARGETS = {
    "first_page_median_ms": 3.0,
    "deep_page_ratio": 1.2,
    "walk_s": 3.0,
    "typical_delete_median_ms": 5.0,
    "big_delete_median_ms": 150.0,
}

_COLUMNS = (
    "id, tenant, principal, title, title_state, created_at, updated_at, last_event_at, "
    "last_sequence, active_run_id, last_run_id, last_run_started_at"
)
# The list route's query, written out: the same filter, the same ORDER BY, limit + 1 rows.
KEYSET_SQL = (
    f"SELECT {_COLUMNS} FROM sessions WHERE tenant = :tenant AND principal = :principal "
    "AND updated_at <= :ts AND (updated_at < :ts OR id < :id) "
    "ORDER BY updated_at DESC, id DESC LIMIT :limit"
)
FIRST_SQL = (
    f"SELECT {_COLUMNS} FROM sessions WHERE tenant = :tenant AND principal = :principal "
    "ORDER BY updated_at DESC, id DESC LIMIT :limit"
)
OFFSET_SQL = (
    f"SELECT {_COLUMNS} FROM sessions WHERE tenant = :tenant AND principal = :principal "
    "ORDER BY updated_at DESC, id DESC LIMIT :limit OFFSET :offset"
)


@dataclass(frozen=True)
class PageSpec:
    """One measured page: its depth (items before it), cursor, and keyset position."""

    label: str
    depth: int
    cursor: str | None
    position: Position | None


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench server", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--sessions", type=int, default=100_000, help="sessions of the measured principal"
    )
    parser.add_argument(
        "--others", type=int, default=None, help="sessions of other principals (default: as many)"
    )
    parser.add_argument(
        "--database", default=None, help="an empty database URL (default: a temp SQLite file)"
    )
    parser.add_argument("--samples", type=int, default=200, help="timed requests per list page")
    parser.add_argument("--walks", type=int, default=3, help="full walks of the index")
    parser.add_argument("--deletes", type=int, default=50, help="typical sessions deleted")
    parser.add_argument("--big-deletes", type=int, default=5, help="big sessions deleted")
    parser.add_argument("--big-events", type=int, default=10_000)
    parser.add_argument("--big-artifacts", type=int, default=100)
    parser.add_argument(
        "--name", default="server", help="results file name (bench/results/NAME.json)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (database, objects)")
    parser.add_argument(
        "--postgres", action="store_true", help="run on a throwaway PostgreSQL cluster"
    )
    parser.add_argument(
        "--floor-only", action="store_true", help="only seed and measure against the floor"
    )
    parser.add_argument(
        "--no-index-lease",
        action="store_true",
        help="PostgreSQL: the floor's server without the index-cache lease (decision 0190)",
    )
    parser.add_argument("--floor-samples", type=int, default=500, help="timed requests per kind")
    parser.add_argument("--floor-rounds", type=int, default=3, help="throughput rounds")
    parser.add_argument(
        "--floor-seconds", type=float, default=2.0, help="seconds per throughput measurement"
    )
    parser.add_argument(
        "--floor-deletes", type=int, default=100, help="typical DELETEs against the floor's 304"
    )
    args = parser.parse_args(argv)
    if args.sessions < 10:
        parser.error("--sessions must be at least 10")
    return args


def _summary(samples_s: list[float]) -> dict[str, float]:
    """Median and p95 (`report.summarize_ms`) plus the minimum: on a busy 2-core machine the
    median carries scheduling delays, and the minimum shows what the code itself costs."""
    return {**report.summarize_ms(samples_s), "min_ms": round(min(samples_s) * 1000, 3)}


def _timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _interleaved(
    fns: dict[str, Callable[[], Any]], samples: int, warmup: int
) -> dict[str, list[float]]:
    """Time every function `samples` times, one of each per round, after `warmup` rounds."""
    out: dict[str, list[float]] = {k: [] for k in fns}
    for round_no in range(warmup + samples):
        for key, fn in fns.items():
            elapsed = _timed(fn)
            if round_no >= warmup:
                out[key].append(elapsed)
    return out


class Bench:
    """One benchmark run: the database, the server, the client, and the figures."""

    def __init__(self, args: argparse.Namespace, workdir: Path) -> None:
        self.args = args
        self.workdir = workdir
        self.url = args.database or f"sqlite:///{workdir / 'bench.sqlite3'}"
        self.objects = workdir / "objects"
        self.db = Database(self.url)
        self.others = args.sessions if args.others is None else args.others
        self.figures: dict[str, Any] = {}
        self.new_id = IdMaker(4242)

    # -- set-up -------------------------------------------------------------------------

    def seed(self) -> None:
        self.db.create_schema()
        with self.db.read() as s:
            existing = s.scalar(select(func.count()).select_from(SessionRow))
        if existing:
            raise SystemExit(
                f"{self.url} already holds {existing} sessions: give an empty database"
            )
        started = time.perf_counter()
        seed_index(self.db, self.args.sessions, self.others)
        elapsed = time.perf_counter() - started
        if self.db.is_sqlite:
            # A bulk load leaves a WAL as big as the database; a server that has been running
            # has long checkpointed it, so do that now rather than inside a measured commit.
            raw = self.db.engine.raw_connection()
            try:
                driver = raw.driver_connection
                assert driver is not None
                driver.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                raw.close()
        self.figures["seed"] = {
            "sessions": self.args.sessions,
            "other_sessions": self.others,
            "seconds": round(elapsed, 2),
        }
        print(f"seeded {self.args.sessions} + {self.others} sessions in {elapsed:.1f} s")

    def settings(self) -> ServerSettings:
        return ServerSettings(
            database_url=self.url,
            artifacts_dir=self.objects,
            control=True,
            agent_delay=0.0,
            maintenance_interval=3600.0,
        )

    # -- list ---------------------------------------------------------------------------

    def _position_at(self, depth: int) -> Position:
        """The keyset position of the item just before `depth` (what a walk would hold)."""
        with self.db.read() as s:
            row = s.execute(
                text(OFFSET_SQL),
                {**self._owner(), "limit": 1, "offset": depth - 1},
            ).one()
        return Position(row.updated_at, row.id)

    def _owner(self) -> dict[str, str]:
        return {"tenant": MEASURED.tenant, "principal": MEASURED.principal}

    def pages(self, codec: CursorCodec) -> list[PageSpec]:
        specs = [PageSpec("first", 0, None, None)]
        for fraction in DEPTH_FRACTIONS:
            depth = round(self.args.sessions * fraction)
            if depth <= 0 or depth + 1 > self.args.sessions:
                continue
            pos = self._position_at(depth)
            cursor = codec.encode("sessions", MEASURED.tenant, MEASURED.principal, pos)
            specs.append(PageSpec(f"depth {depth:,}", depth, cursor, pos))
        return specs

    def _offset_query(self, depth: int) -> Callable[[], list[Any]]:
        params = {**self._owner(), "limit": PAGE + 1, "offset": depth}
        sql = text(OFFSET_SQL)

        def run() -> list[Any]:
            with self.db.read() as s:
                return list(s.execute(sql, params).all())

        return run

    def _keyset_query(self, spec: PageSpec) -> Callable[[], list[Any]]:
        if spec.position is None:
            sql, params = text(FIRST_SQL), {**self._owner(), "limit": PAGE + 1}
        else:
            sql = text(KEYSET_SQL)
            params = {
                **self._owner(),
                "limit": PAGE + 1,
                "ts": spec.position.timestamp,
                "id": spec.position.item_id,
            }

        def run() -> list[Any]:
            with self.db.read() as s:
                return list(s.execute(sql, params).all())

        return run

    def query_plans(self, specs: list[PageSpec]) -> dict[str, str]:
        """The backend's plan for the keyset and the OFFSET query (proof of the index seek)."""
        explain = "EXPLAIN QUERY PLAN " if self.db.is_sqlite else "EXPLAIN "
        deep = specs[-1]
        assert deep.position is not None
        params = {
            **self._owner(),
            "limit": PAGE + 1,
            "offset": deep.depth,
            "ts": deep.position.timestamp,
            "id": deep.position.item_id,
        }
        plans = {}
        with self.db.read() as s:
            for name, sql in (("keyset", KEYSET_SQL), ("offset", OFFSET_SQL)):
                rows = s.execute(text(explain + sql), params).all()
                plans[name] = " | ".join(str(r[-1]) for r in rows)
        return plans

    def check_pages(self, client: httpx.Client, specs: list[PageSpec]) -> None:
        """Each HTTP keyset page holds exactly the ids of the same page fetched with OFFSET."""
        for spec in specs:
            params: dict[str, Any] = {"limit": PAGE}
            if spec.cursor:
                params["cursor"] = spec.cursor
            resp = client.get("/v1/sessions", params=params)
            resp.raise_for_status()
            got = [item["id"] for item in resp.json()["items"]]
            want = [row.id for row in self._offset_query(spec.depth)()][:PAGE]
            if got != want:
                raise SystemExit(f"{spec.label}: keyset page differs from the OFFSET page")

    def measure_list(self, client: httpx.Client, specs: list[PageSpec]) -> list[dict[str, Any]]:
        samples, warmup = self.args.samples, max(5, self.args.samples // 10)

        def fetch(spec: PageSpec) -> Callable[[], Any]:
            params: dict[str, Any] = {"limit": PAGE}
            if spec.cursor:
                params["cursor"] = spec.cursor

            def run() -> None:
                resp = client.get("/v1/sessions", params=params)
                if resp.status_code != 200:
                    raise SystemExit(f"list answered {resp.status_code}: {resp.text[:200]}")

            return run

        http = _interleaved({s.label: fetch(s) for s in specs}, samples, warmup)
        keyset = _interleaved({s.label: self._keyset_query(s) for s in specs}, samples, warmup)
        offset = _interleaved(
            {s.label: self._offset_query(s.depth) for s in specs}, samples, warmup
        )
        etag = client.get("/v1/sessions", params={"limit": PAGE}).headers["etag"]

        def conditional() -> None:
            resp = client.get(
                "/v1/sessions", params={"limit": PAGE}, headers={"If-None-Match": etag}
            )
            if resp.status_code != 304:
                raise SystemExit(f"conditional first page answered {resp.status_code}")

        not_modified = _interleaved({"304": conditional}, samples, warmup)["304"]
        rows = []
        for spec in specs:
            rows.append(
                {
                    "page": spec.label,
                    "depth": spec.depth,
                    "http": _summary(http[spec.label]),
                    "keyset_query": _summary(keyset[spec.label]),
                    "offset_query": _summary(offset[spec.label]),
                }
            )
        rows.append(
            {
                "page": "first, If-None-Match (304)",
                "depth": 0,
                "http": _summary(not_modified),
            }
        )
        return rows

    def walk(self, client: httpx.Client) -> dict[str, Any]:
        times: list[float] = []
        pages = 0
        for _ in range(self.args.walks):
            seen: set[str] = set()
            count = 0
            pages = 0
            cursor: str | None = None
            started = time.perf_counter()
            while True:
                params: dict[str, Any] = {"limit": WALK_PAGE}
                if cursor:
                    params["cursor"] = cursor
                resp = client.get("/v1/sessions", params=params)
                resp.raise_for_status()
                body = resp.json()
                pages += 1
                for item in body["items"]:
                    seen.add(item["id"])
                count += len(body["items"])
                cursor = body["next_cursor"]
                if cursor is None:
                    break
            times.append(time.perf_counter() - started)
            if count != self.args.sessions or len(seen) != count:
                raise SystemExit(
                    f"walk saw {count} items, {len(seen)} distinct, of {self.args.sessions}"
                )
        return {
            "sessions": self.args.sessions,
            "limit": WALK_PAGE,
            "pages": pages,
            "seconds": [round(t, 3) for t in times],
            "median_s": round(statistics.median(times), 3),
            "per_page_ms": round(statistics.median(times) / pages * 1000, 3),
        }

    # -- delete -------------------------------------------------------------------------

    def _delete(self, client: httpx.Client, sid: str) -> float:
        started = time.perf_counter()
        resp = client.delete(f"/v1/sessions/{sid}")
        elapsed = time.perf_counter() - started
        if resp.status_code != 204:
            raise SystemExit(f"DELETE answered {resp.status_code}: {resp.text[:200]}")
        return elapsed

    def _assert_purged(self, control: httpx.Client, sid: str) -> None:
        audit = control.get(f"/_stub/sessions/{sid}/residue").json()
        left = {k: v for k, v in audit["rows"].items() if v}
        if left or audit["objects"] or audit["outbox"] or not audit["tombstone"]:
            raise SystemExit(f"purge of {sid} left residue: {audit}")

    def measure_deletes(self, client: httpx.Client, control: httpx.Client) -> dict[str, Any]:
        sids, events = floor.typical_sessions(client, self.args.deletes)
        typical = [self._delete(client, sid) for sid in sids]
        for sid in sids[:3]:
            self._assert_purged(control, sid)
        # What the background scrub after a delete costs (CONTRACT §9.2: the WAL checkpoint
        # on SQLite, VACUUM on PostgreSQL): a delete, then one scrub, timed apart.
        scrubs: list[float] = []
        more, _ = floor.typical_sessions(client, min(20, self.args.deletes))
        tables = purged_tables()
        for sid in more:
            self._delete(client, sid)
            scrubs.append(_timed(lambda: self.db.scrub(tables)))
        store = FilesystemObjectStore(self.objects)
        big: list[float] = []
        for _ in range(self.args.big_deletes):
            sid = seed_big_session(
                self.db, store, self.new_id, self.args.big_events, self.args.big_artifacts
            )
            if store.count(sid) != self.args.big_artifacts:
                raise SystemExit("big session seeding lost object-store files")
            big.append(self._delete(client, sid))
            self._assert_purged(control, sid)
        return {
            "typical": {
                "events_per_session": events,
                "runs_per_session": 1,
                **_summary(typical),
            },
            "scrub_after_delete": _summary(scrubs),
            "big": {
                "events": self.args.big_events,
                "artifacts": self.args.big_artifacts,
                **_summary(big),
                "samples_ms": [round(t * 1000, 2) for t in big],
            },
        }

    # -- the run ------------------------------------------------------------------------

    def measure_floor(self) -> dict[str, Any]:
        """The real server as a child process (its CPU its own) against the floor app."""
        extra = ("--no-index-lease",) if self.args.no_index_lease else ()
        proc, log_file, url = start_server(self.url, self.workdir, "floor-server.log", extra)
        try:
            return floor.measure(
                (proc.pid, url),
                MEASURED.token,
                self.workdir,
                samples=self.args.floor_samples,
                rounds=self.args.floor_rounds,
                seconds=self.args.floor_seconds,
                deletes=self.args.floor_deletes,
            )
        finally:
            proc.terminate()
            proc.wait(30)
            assert proc.stdout is not None
            proc.stdout.close()
            log_file.close()

    def run(self) -> dict[str, Any]:
        self.seed()
        if self.args.floor_only:
            self.figures["floor"] = self.measure_floor()
            self.db.dispose()
            return self.figures
        with ServerThread(self.settings()) as server:
            codec = CursorCodec(self.db.cursor_key())
            headers = {"Authorization": f"Bearer {MEASURED.token}"}
            with (
                httpx.Client(base_url=server.url, headers=headers, timeout=60) as client,
                httpx.Client(base_url=server.url, timeout=60) as control,
            ):
                specs = self.pages(codec)
                self.check_pages(client, specs)
                self.figures["plans"] = self.query_plans(specs)
                print("measuring list pages ...")
                self.figures["list"] = self.measure_list(client, specs)
                print("walking the index ...")
                self.figures["walk"] = self.walk(client)
                print("measuring deletes ...")
                self.figures["delete"] = self.measure_deletes(client, control)
        # After the in-process server stopped: a SQLite file is served by one process.
        self.figures["floor"] = self.measure_floor()
        self.db.dispose()
        return self.figures


def _verdicts(fig: dict[str, Any]) -> dict[str, Any]:
    pages = [p for p in fig["list"] if "keyset_query" in p]
    first = pages[0]["http"]["median_ms"]
    deepest_ratio = max(p["http"]["median_ms"] for p in pages) / first
    out = {
        "first_page_median_ms": (first, first < TARGETS["first_page_median_ms"]),
        "deep_page_ratio": (round(deepest_ratio, 2), deepest_ratio <= TARGETS["deep_page_ratio"]),
        "walk_s": (fig["walk"]["median_s"], fig["walk"]["median_s"] < TARGETS["walk_s"]),
        "typical_delete_median_ms": (
            fig["delete"]["typical"]["median_ms"],
            fig["delete"]["typical"]["median_ms"] < TARGETS["typical_delete_median_ms"],
        ),
        "big_delete_median_ms": (
            fig["delete"]["big"]["median_ms"],
            fig["delete"]["big"]["median_ms"] < TARGETS["big_delete_median_ms"],
        ),
    }
    return {k: {"value": v, "target": TARGETS[k], "met": ok} for k, (v, ok) in out.items()}


def _print(fig: dict[str, Any]) -> None:
    floor.print_figures(fig["floor"], fig["backend"])
    if "list" not in fig:
        return
    n = fig["seed"]["sessions"]
    rows = []
    for p in fig["list"]:
        row = [p["page"], p["http"]["median_ms"], p["http"]["p95_ms"]]
        if "keyset_query" in p:
            row += [
                p["keyset_query"]["median_ms"],
                p["keyset_query"]["p95_ms"],
                p["offset_query"]["median_ms"],
                p["offset_query"]["p95_ms"],
            ]
        else:
            row += ["", "", "", ""]
        rows.append(row)
    report.print_table(
        f"GET /v1/sessions?limit={PAGE}, {n:,} sessions of the principal + "
        f"{fig['seed']['other_sessions']:,} of others (ms). HTTP = whole round trip over "
        "loopback (keep-alive httpx); query = the SQL alone, in process, same engine",
        [
            "page",
            "HTTP median",
            "HTTP p95",
            "keyset query med",
            "keyset p95",
            "OFFSET query med",
            "OFFSET p95",
        ],
        rows,
    )
    walk = fig["walk"]
    delete = fig["delete"]
    big = delete["big"]
    report.print_table(
        "Walk and DELETE (over HTTP)",
        ["measure", "median", "p95", "n"],
        [
            [
                f"full walk, limit {walk['limit']} ({walk['pages']} pages)",
                f"{walk['median_s']} s",
                "",
                len(walk["seconds"]),
            ],
            [
                f"DELETE typical ({delete['typical']['events_per_session']} events, 1 run)",
                f"{delete['typical']['median_ms']} ms",
                f"{delete['typical']['p95_ms']} ms",
                delete["typical"]["n"],
            ],
            [
                "scrub after a delete (WAL checkpoint / VACUUM, in the background)",
                f"{delete['scrub_after_delete']['median_ms']} ms",
                f"{delete['scrub_after_delete']['p95_ms']} ms",
                delete["scrub_after_delete"]["n"],
            ],
            [
                f"DELETE {big['events']:,} events + {big['artifacts']} artifacts",
                f"{delete['big']['median_ms']} ms",
                f"{delete['big']['p95_ms']} ms",
                delete["big"]["n"],
            ],
        ],
    )
    report.print_table(
        "Targets",
        ["measure", "value", "target", "met"],
        [
            [k, v["value"], v["target"], "yes" if v["met"] else "NO"]
            for k, v in fig["targets"].items()
        ],
    )
    load = fig["load_average_1min"]
    print(f"\nload average (1 min): {load['start']:.2f} at start, {load['end']:.2f} at end")
    print("plans:", *(f"  {k}: {v}" for k, v in fig["plans"].items()), sep="\n")


def main(argv: list[str]) -> int:
    """Run the server benchmark; print the tables and save `bench/results/<name>.json`."""
    args = _parse(argv)
    logging.basicConfig(level=logging.WARNING)
    workdir = Path(tempfile.mkdtemp(prefix="converge-bench-"))
    load_before = os.getloadavg()
    try:
        with contextlib.ExitStack() as stack:
            if args.postgres:
                args.database = stack.enter_context(throwaway_postgres())
            fig = Bench(args, workdir).run()
        # Other work on the machine moves medians a lot on 2 cores: record how busy it was.
        fig["load_average_1min"] = {"start": load_before[0], "end": os.getloadavg()[0]}
        fig["targets"] = _verdicts(fig) if "list" in fig else {}
        fig["machine"] = {
            "cores": os.cpu_count(),
            "processor": platform.processor() or platform.machine(),
        }
        fig["backend"] = "sqlite" if args.database is None else args.database.split(":", 1)[0]
        fig["index_lease"] = not args.no_index_lease  # PostgreSQL only (decision 0190)
        _print(fig)
        report.save(args.name, fig)
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0
