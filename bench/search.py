"""`python -m bench search`: mirrored history at a large account's size (CONTRACT §11).

A server process (`bench.ui.ServerProcess`) is seeded straight in its database with
`--conversations` conversations (default 10,000) of `--messages` user messages each (default
20: English, accented French and Japanese text from a seeded PRNG). A fresh profile then
syncs: one pass and its content phase (the backfill: wall time and requests counted by the
transport). Then:

- search latency: each query of a mix (common and rare words, accented, CJK inside a
  sentence, one- and two-character Japanese words, two words, a short query) run `--repeat`
  times, median and p95 per query and over the mix;
- mirror size against the content it holds (the events' JSON and the titles), the WAL
  checkpointed;
- one new message in one conversation (a run started through the API): the next pass's
  requests, the walk's and the content phase's apart;
- every hit (`--direct`): `Mirror.search(query, None)`, what `converge search` reads, for a
  word in nearly every conversation ("the"), two common words ("budget meeting") and a
  two-character Japanese word ("会議"), CPU and wall of each of `--repeat` runs; then
  `converge search` itself in a child process over the same mirror, its output to a file
  (wall from process start; the CPU of the child);
- the alternatives for the index (decision 0121), built from the same folded texts in a
  scratch file: trigram `detail=none` (what the mirror uses), trigram `detail=full`,
  `unicode61` (words; it cannot find a word inside CJK text), and the short index beside the
  trigrams (the one- and two-character grams of CJK runs, decision 0123): size and a query.

Figures go to `bench/results/search.json` for `docs/performance.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.report import print_table, save, summarize_ms
from bench.ui import ServerProcess, _bump, _ts
from sync.mirror import sqlite_driver

EN = [
    "the",
    "report",
    "budget",
    "meeting",
    "project",
    "review",
    "deadline",
    "design",
    "server",
    "client",
    "window",
    "search",
    "history",
    "message",
    "answer",
    "question",
    "summary",
    "draft",
    "plan",
    "release",
    "schedule",
    "team",
]
FR = [
    "réunion",
    "écrire",
    "été",
    "déjà",
    "général",
    "créer",
    "problème",
    "bibliothèque",
    "fenêtre",
    "numéro",
]
JA = ["東京都の天気は晴れです", "会議の資料を準備します", "新しい機能を追加しました", "検索結果"]
QUERIES = (
    "report",
    "réunion",
    "ECRIRE",
    "東京都",
    "機能を追加",
    "budget meeting",
    "zqx",
    "ai",
    "会議",  # two characters inside Japanese text: the short index (decision 0123)
    "晴",  # one
    "猫",  # one that no message holds
)


def _text(rnd: random.Random) -> str:
    words = [rnd.choice(EN) for _ in range(rnd.randint(8, 40))]
    if rnd.random() < 0.3:
        words.insert(rnd.randrange(len(words)), rnd.choice(FR))
    if rnd.random() < 0.15:
        words.append(rnd.choice(JA))
    return " ".join(words)


type Seeded = tuple[list[tuple[str, str, str, str, int]], list[tuple[str, int, str, str, str]], int]


def seeded(conversations: int, messages: int, seed: int = 19) -> Seeded:
    """The conversations (id, title, created, updated, last sequence), their
    `message.user` events (session, sequence, type, created, JSON) and the bytes of message
    text, the same for a given seed."""
    rnd = random.Random(seed)
    base = datetime(2026, 1, 1, tzinfo=UTC)
    sessions, events = [], []
    text_bytes = 0
    for i in range(conversations):
        at = _ts(base + timedelta(seconds=i))
        sid = f"ses_search{i:08d}"
        sessions.append((sid, f"Conversation {i} {rnd.choice(EN)}", at, at, messages))
        for seq in range(1, messages + 1):
            text = _text(rnd)
            text_bytes += len(text.encode())
            data = {"role": "user", "content": [{"type": "text", "text": text}]}
            events.append((sid, seq, "message.user", at, json.dumps(data, ensure_ascii=False)))
    return sessions, events, text_bytes


def populate(db: Path, conversations: int, messages: int) -> tuple[list[str], int]:
    """The conversations and their events written in the server's database; returns the
    ids and the bytes of message text written."""
    sessions, events, text_bytes = seeded(conversations, messages)
    conn = sqlite_driver.connect(db, timeout=30)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT INTO sessions (id, tenant, principal, title, title_state, created_at,"
            " updated_at, last_sequence) VALUES (?, 'acme', 'alice', ?, 'stored', ?, ?, ?)",
            sessions,
        )
        conn.executemany(
            "INSERT INTO events (session_id, sequence, run_id, type, created_at, data)"
            " VALUES (?, ?, NULL, ?, ?, ?)",
            events,
        )
        _bump(conn)
        conn.execute("COMMIT")
    finally:
        conn.close()
    return [s[0] for s in sessions], text_bytes


async def _sync(url: str, profile_dir: Path, ids: list[str], repeat: int) -> dict[str, Any]:
    from sync.engine import SyncEngine
    from sync.profile.profile import Profile
    from tests.sync.faults import FaultTransport
    from tests.sync.helpers import Server

    transport = FaultTransport()
    profile = Profile.load(profile_dir, server=url, token="dev-alice", environ={})
    engine = await SyncEngine.open(profile, transport=transport)
    figures: dict[str, Any] = {}
    try:
        started = time.perf_counter()
        report = await engine.reconcile()
        rows_at = time.perf_counter() - started
        await engine.content.wait_idle()
        phases = 1
        while await asyncio.to_thread(engine.mirror.stale_transcripts, 1):
            engine.content.kick()  # a phase stops at its time budget: the next goes on
            await engine.content.wait_idle()
            phases += 1
        backfill = time.perf_counter() - started
        assert report.ok, report.problem
        figures["backfill"] = {
            "rows_s": round(rows_at, 2),
            "wall_s": round(backfill, 2),
            "walk_requests": transport.count("GET", "/v1/sessions"),
            "event_requests": transport.count("GET", r"/v1/sessions/[^/]+/events"),
            "requests": len(transport.log),
            "phases": phases,
        }
        samples: dict[str, list[float]] = {}
        counts: dict[str, int] = {}
        for _ in range(repeat):
            for query in QUERIES:
                t0 = time.perf_counter()
                hits = await engine.search(query)
                samples.setdefault(query, []).append(time.perf_counter() - t0)
                counts[query] = len(hits)
        figures["search"] = {q: {**summarize_ms(s), "hits": counts[q]} for q, s in samples.items()}
        figures["search_mix"] = summarize_ms([x for s in samples.values() for x in s])
        async with Server(url) as server:
            target = ids[len(ids) // 2]
            await server.wait_run(await server.start(target, "one new message"))
        transport.log.clear()
        await engine.reconcile()
        await engine.content.wait_idle()
        walk = transport.count("GET", "/v1/sessions")
        figures["one_new_message"] = {
            "walk_requests": walk,
            "beyond_walk": len(transport.log) - walk,
        }
        await asyncio.to_thread(engine.mirror.scrub)
    finally:
        await engine.close()
    return figures


def build_direct(profile_dir: Path, conversations: int, messages: int) -> Path:
    """The mirror built straight from the seeded data through the mirror's own writes
    (`Mirror.apply`, then `Mirror.store_events` per conversation, newest first, as the
    backfill does), with no server: `--direct`, for the search and size figures only."""
    from sync.mirror.store import Mirror
    from sync.wire.models import Event, SessionView

    sessions, events, _ = seeded(conversations, messages)
    path = profile_dir / "mirror.sqlite3"
    profile_dir.mkdir(parents=True, exist_ok=True)
    mirror = Mirror.open(path)
    try:
        mirror.apply(
            [SessionView(sid, title, c, u, None, None) for sid, title, c, u, _ in sessions]
        )
        by_session: dict[str, list[Event]] = {}
        for sid, seq, kind, at, data in events:
            event = Event(sid, None, seq, kind, at, json.loads(data))
            by_session.setdefault(sid, []).append(event)
        for sid, _title, _c, updated, _n in reversed(sessions):
            mirror.store_events(sid, by_session.get(sid, []), fetched_at=updated)
        mirror.scrub()
    finally:
        mirror.close()
    return path


def _search_figures(search: Any, repeat: int) -> dict[str, Any]:
    """Each query of the mix `repeat` times through `search(query)` (the mirror's)."""
    samples: dict[str, list[float]] = {}
    counts: dict[str, int] = {}
    for _ in range(repeat):
        for query in QUERIES:
            t0 = time.perf_counter()
            hits = search(query)
            samples.setdefault(query, []).append(time.perf_counter() - t0)
            counts[query] = len(hits)
    return {
        "search": {q: {**summarize_ms(s), "hits": counts[q]} for q, s in samples.items()},
        "search_mix": summarize_ms([x for s in samples.values() for x in s]),
    }


EVERY_HIT = ("the", "budget meeting", "会議")


def _every_hit(mirror_path: Path, repeat: int) -> dict[str, Any]:
    """`Mirror.search(query, None)` for each of `EVERY_HIT`, `repeat` runs each, runs of the
    queries interleaved; then `converge search` in a child process, `repeat` runs each.

    A user's `converge` runs with the project's bytecode cached (written by its first run):
    the children may write it even where the environment says PYTHONDONTWRITEBYTECODE, and
    an untimed run writes it first, else each child would compile every module changed
    since the cache was last written."""
    from sync.mirror.store import Mirror

    cpu: dict[str, list[float]] = {q: [] for q in EVERY_HIT}
    wall: dict[str, list[float]] = {q: [] for q in EVERY_HIT}
    hits: dict[str, int] = {}
    mirror = Mirror.open(mirror_path)
    try:
        for _ in range(repeat):
            for query in EVERY_HIT:
                c0, w0 = time.process_time(), time.perf_counter()
                hits[query] = len(mirror.search(query, None))
                cpu[query].append(time.process_time() - c0)
                wall[query].append(time.perf_counter() - w0)
    finally:
        mirror.close()
    figures: dict[str, Any] = {
        q: {
            "hits": hits[q],
            "cpu_best_s": round(min(cpu[q]), 3),
            "cpu_median_s": round(statistics.median(cpu[q]), 3),
            "wall_best_s": round(min(wall[q]), 3),
        }
        for q in EVERY_HIT
    }
    with tempfile.TemporaryDirectory() as folder:
        from sync.profile.profile import Profile

        profile = Profile.load(
            Path(folder), server="http://127.0.0.1:9", token="dev-alice", environ={}
        )
        profile.mirror_path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(mirror_path, profile.mirror_path)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        command = [sys.executable, "-m", "app.main", "search", "--profile", folder]
        subprocess.run([*command, "zqx"], stdout=subprocess.DEVNULL, env=env, check=True)
        for query in EVERY_HIT:
            walls, cpus = [], []
            for _ in range(repeat):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                with open(Path(folder) / "out.txt", "w") as out:
                    w0 = time.perf_counter()
                    subprocess.run([*command, query], stdout=out, env=env, check=True)
                    walls.append(time.perf_counter() - w0)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            figures[query]["cli_wall_best_s"] = round(min(walls), 3)
            figures[query]["cli_cpu_best_s"] = round(min(cpus), 3)
    return figures


def _removal_cost(db: Any, texts: list[str], per: int) -> dict[str, float]:
    """One conversation's entries (`per` of them) removed: with `secure-delete` (SQLite
    3.44+), and without it followed by the whole-index merge the fallback runs (decision
    0120)."""
    figures: dict[str, float] = {}
    for label, rows in (
        ("secure_delete_ms", range(1, per + 1)),
        ("delete_and_optimize_ms", range(per + 1, 2 * per + 1)),
    ):
        secure = label == "secure_delete_ms"
        if secure and not sqlite_driver.SECURE_DELETE:
            continue
        db.execute("INSERT INTO s (s, rank) VALUES ('secure-delete', ?)", (int(secure),))
        t0 = time.perf_counter()
        for rowid in rows:
            db.execute(
                "INSERT INTO s (s, rowid, text) VALUES ('delete', ?, ?)", (rowid, texts[rowid - 1])
            )
        if not secure:
            db.execute("INSERT INTO s (s) VALUES ('optimize')")
        db.commit()
        figures[label] = round((time.perf_counter() - t0) * 1000, 1)
    return figures


def _alternatives(mirror_path: Path, rare: str) -> dict[str, Any]:
    """Index variants built from the mirror's folded texts in a scratch file: one entry
    per conversation (what the mirror holds after a backfill, decision 0121) or per event,
    trigram `detail=none` or `full`, or `unicode61` words."""
    from sync.mirror.search_text import fold, fts_query, short_grams

    src = sqlite_driver.connect(mirror_path)
    rows = src.execute(
        "SELECT session_id, json_extract(data, '$.content[0].text') FROM events"
        " WHERE type = 'message.user' ORDER BY session_id, sequence"
    ).fetchall()
    src.close()
    per_event = [fold(t) for _, t in rows if t]
    grouped: dict[str, list[str]] = {}
    for sid, text in rows:
        if text:
            grouped.setdefault(sid, []).append(fold(text))
    per_conversation = ["\n".join(texts) for texts in grouped.values()]
    out: dict[str, Any] = {}
    cjk = '"機能を"'  # a word inside Japanese text, three characters
    variants = {
        "trigram_detail_none_per_conversation": (
            "trigram case_sensitive 1", "none", fts_query(rare), cjk, per_conversation,
        ),
        "trigram_detail_none_per_event": (
            "trigram case_sensitive 1", "none", fts_query(rare), cjk, per_event,
        ),
        "trigram_detail_full_per_event": (
            "trigram case_sensitive 1", "full", f'"{rare}"', cjk, per_event,
        ),
        "unicode61_words_per_event": (
            "unicode61 remove_diacritics 2", "full", f'"{rare}"', cjk, per_event,
        ),
        "short_grams_per_conversation": (
            "unicode61 remove_diacritics 0", "none", '"会議"', '"機能"',
            [short_grams(text) for text in per_conversation],
        ),
    }  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        for name, (tokenizer, detail, query, cjk_query, texts) in variants.items():
            path = Path(folder) / f"{name}.sqlite3"
            db = sqlite_driver.connect(path)
            db.execute(
                f"CREATE VIRTUAL TABLE s USING fts5(text, content='', tokenize='{tokenizer}',"
                f" detail={detail}, columnsize=0)"
            )
            t0 = time.perf_counter()
            db.executemany("INSERT INTO s (rowid, text) VALUES (?, ?)", enumerate(texts, 1))
            db.commit()
            build = time.perf_counter() - t0
            db.execute("INSERT INTO s (s) VALUES ('optimize')")
            db.commit()
            db.execute("VACUUM")
            samples = []
            for _ in range(20):
                t0 = time.perf_counter()
                db.execute("SELECT count(*) FROM s WHERE s MATCH ?", (query,)).fetchone()
                samples.append(time.perf_counter() - t0)
            found = db.execute("SELECT count(*) FROM s WHERE s MATCH ?", (cjk_query,)).fetchone()
            removal: dict[str, float] = {}
            if "per_conversation" in name or name.startswith("trigram_detail_none"):
                per = 1 if "per_conversation" in name else len(per_event) // len(per_conversation)
                removal = _removal_cost(db, texts, per)
            db.close()
            out[name] = {
                "entries": len(texts),
                "index_bytes": path.stat().st_size,
                "build_s": round(build, 2),
                "rare_word_query": summarize_ms(samples),
                "finds_cjk_inside_text": bool(found[0]),
                **removal,
            }
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench search")
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument(
        "--direct",
        action="store_true",
        help="build the mirror straight from the seeded data (no server, no backfill): search"
        " and size figures only, saved as search_direct",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="converge-bench-search-") as tmp:
        folder = Path(tmp)
        if args.direct:
            mirror_path = build_direct(folder / "profile", args.conversations, args.messages)
            text_bytes = seeded(args.conversations, args.messages)[2]
            from sync.mirror.store import Mirror

            mirror = Mirror.open(mirror_path)
            try:
                figures = _search_figures(mirror.search, args.repeat)
            finally:
                mirror.close()
            figures["every_hit"] = _every_hit(mirror_path, min(args.repeat, 5))
        else:
            server = ServerProcess(folder)
            try:
                ids, text_bytes = populate(server.db, args.conversations, args.messages)
                figures = asyncio.run(_sync(server.url, folder / "profile", ids, args.repeat))
            finally:
                server.stop()
            (mirror_path,) = (folder / "profile" / "accounts").glob("*/mirror.sqlite3")
        db = sqlite_driver.connect(mirror_path)
        content = db.execute(
            "SELECT (SELECT sum(length(CAST(data AS BLOB)) + length(type) + length(created_at)"
            " + length(session_id) + 8) FROM events)"
            " + (SELECT sum(length(CAST(coalesce(title, '') AS BLOB)) + length(id) + 60)"
            " FROM sessions)"
        ).fetchone()[0]
        db.close()
        size = mirror_path.stat().st_size
        figures["size"] = {
            "conversations": args.conversations,
            "messages_each": args.messages,
            "message_text_bytes": text_bytes,
            "content_bytes": content,
            "mirror_bytes": size,
            "ratio": round(size / content, 2),
        }
        figures["alternatives"] = _alternatives(mirror_path, "bibliotheque")
        figures["sqlite"] = sqlite_driver.describe()
    print_table(
        "search latency (ms)",
        ["query", "median", "p95", "hits"],
        [[q, f["median_ms"], f["p95_ms"], f["hits"]] for q, f in figures["search"].items()],
    )
    s = figures["size"]
    if args.direct:
        print_table(
            "every hit (converge search)",
            ["query", "hits", "CPU best s", "CPU median s", "CLI wall best s", "CLI CPU best s"],
            [
                [q, f["hits"], f["cpu_best_s"], f["cpu_median_s"], f["cli_wall_best_s"],
                 f["cli_cpu_best_s"]]
                for q, f in figures["every_hit"].items()
            ],
        )  # fmt: skip
        print_table(
            "mirror",
            ["content MB", "mirror MB", "ratio"],
            [[round(s["content_bytes"] / 1e6, 1), round(s["mirror_bytes"] / 1e6, 1), s["ratio"]]],
        )
    else:
        print_table(
            "mirror",
            [
                "content MB",
                "mirror MB",
                "ratio",
                "backfill s",
                "requests",
                "new message: beyond walk",
            ],
            [
                [
                    round(s["content_bytes"] / 1e6, 1),
                    round(s["mirror_bytes"] / 1e6, 1),
                    s["ratio"],
                    figures["backfill"]["wall_s"],
                    figures["backfill"]["requests"],
                    figures["one_new_message"]["beyond_walk"],
                ]
            ],
        )
    print_table(
        "index alternatives",
        ["variant", "index MB", "rare word median ms", "CJK inside text"],
        [
            [n, round(v["index_bytes"] / 1e6, 1), v["rare_word_query"]["median_ms"],
             v["finds_cjk_inside_text"]]
            for n, v in figures["alternatives"].items()
        ],
    )  # fmt: skip
    save("search_direct" if args.direct else "search", figures)
    return 0
