"""`python -m bench pane`: the conversation pane with long transcripts (offscreen Qt).

For 1,000, 5,000 and 20,000 messages (half the user's, half replies of three sentences),
each size in a child process of its own (`--child N`, so memory figures do not mix):

- open: from `ConversationPane.set_events` until the last message has been painted at the
  bottom of the view; loaded: until `transcript_loaded` (the oldest row is in, decision
  0178) and the view has placed all rows;
- open stall: the longest gap between two ticks of a 1 ms Qt timer from `set_events` until
  0.5 s after both (wall time: the UI thread's work and the machine's);
- memory: the process's RSS after opening, less its RSS with the same pane empty (the
  events are built before the empty figure: they are the engine's, not the pane's);
- scrolling: from the top to the bottom in wheel-sized steps (72 px, at most 2,000 steps),
  the longest step (scroll, paint, and any layout the step causes, `processEvents`), in
  wall time and in the UI thread's CPU time (the machine is shared: wall time counts
  other processes too);
- streaming: a reply streamed in 200 deltas at the bottom: documents laid out per delta
  (from the delegate's own counter: 1 means only the streamed row), and the longest delta.

Targets: open < 0.3 s with no stall over 50 ms and < 40 MB at 5,000 messages;
cost linear or better; scroll steps < 16 ms; a delta lays out no earlier message.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

from bench.report import RESULTS_DIR, print_table, save

SIZES = (1_000, 5_000, 20_000)
TARGETS = {"open_s": 0.3, "open_stall_ms": 50.0, "rss_mb": 40.0, "scroll_ms": 16.0}
AT = "2026-11-30T05:14:13.123456Z"


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


#: Replies of `--content varied`: what an assistant writes (headings, lists, a table, code
#: in several languages, a long line, links), in turn.
VARIED = (
    "## Timetable\n\n| line | every | last |\n|---|---:|---|\n| 1 | 20 min | 19:00 |\n"
    "| 18 | 30 min | 20:30 |\n\nSee [the operator](https://example.org/stcp) for **changes**.",
    "Here is a parser:\n\n```python\nimport json\n\ndef load(path: str) -> dict:\n"
    "    with open(path) as f:\n        return json.load(f)\n```\n\nIt raises `ValueError`.",
    "1. Install it\n2. Run `make test`\n   - on Linux\n   - on macOS\n3. Read the *docs*\n\n"
    '```bash\nfor f in *.log; do gzip "$f"; done\n```',
    "```rust\nfn main() {\n    let v: Vec<u32> = (1..10).map(|x| x * x).collect();\n"
    '    println!("{:?}", v);\n}\n```\n\n> A quote, with a [link](https://example.com).',
    "A long line: " + "the quick brown fox jumps over the lazy dog " * 12 + "\n\n"
    "```sql\nSELECT id, title FROM sessions WHERE updated_at > ? ORDER BY updated_at DESC;\n```",
    "```javascript\nconst total = items.reduce((sum, x) => sum + x.price, 0);\n"
    "console.log(`total: ${total}`);\n```\n\n### Notes\n\n- one\n- two",
)


def _events(count: int, varied: bool = False) -> list[Any]:
    from sync import Event

    events = []
    for n in range(count):
        if n % 2 == 0:
            kind, role = "message.user", "user"
            text = f"Question {n}: which tram goes from Ribeira to Foz, and how often?"
        elif varied:
            kind, role = "message.assistant", "assistant"
            text = f"Answer {n}.\n\n" + VARIED[(n // 2) % len(VARIED)]
        else:
            kind, role = "message.assistant", "assistant"
            text = (
                f"Answer {n}: tram 1 runs along the river every twenty minutes. "
                "The stop is by the Alfândega. Tickets are sold on board. "
                "The last one leaves Foz at seven."
            )
        data = {"role": role, "content": [{"type": "text", "text": text}]}
        events.append(Event("ses_bench", f"run_{n // 2}", n + 1, kind, AT, data))
    return events


def child(count: int, varied: bool = False) -> dict[str, Any]:
    """One size, measured in this process (run as `python -m bench pane --child N`)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from sync import Event
    from ui.pane.pane import ConversationPane

    app = QApplication.instance() or QApplication([sys.argv[0]])
    pane = ConversationPane()
    pane.resize(900, 800)
    pane.show_session("ses_bench", "Bench", AT)
    pane.show()
    events = _events(count, varied)
    from ui.text.code_highlight import warm_up

    warm_up()  # as the window does on a worker thread when a conversation opens
    for _ in range(20):
        app.processEvents()
    empty_rss = _rss_mb()
    view, delegate = pane.transcript, pane.transcript.delegate

    gaps: list[float] = []  # wall time between two ticks
    cpu_gaps: list[float] = []  # the UI thread's CPU time between two ticks
    last_tick = [time.perf_counter(), time.thread_time()]

    def tick() -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        gaps.append(now - last_tick[0])
        cpu_gaps.append(cpu - last_tick[1])
        last_tick[:] = [now, cpu]

    ticker = QTimer()
    ticker.setInterval(1)
    ticker.timeout.connect(tick)
    ticker.start()

    def run_until(done: Any, limit: float = 30.0) -> None:
        deadline = time.perf_counter() + limit
        while not done() and time.perf_counter() < deadline:
            app.processEvents()

    # Open, three times (the median is reported): `set_events` runs from the event loop,
    # as the controller calls it, so the ticker runs between its pass and the layout's.
    last = count - 1
    loaded_at = [0.0]
    pane.transcript_loaded.connect(lambda: loaded_at.__setitem__(0, time.perf_counter()))
    opens: list[tuple[float, float, float]] = []
    loads: list[float] = []
    rss = 0.0
    for _ in range(3):
        pane.set_events([])
        run_until(lambda: view.verticalScrollBar().maximum() == 0, 5.0)
        delegate.painted = -1
        loaded_at[0] = 0.0
        start = time.perf_counter()
        QTimer.singleShot(0, lambda: pane.set_events(events))
        last_tick[:] = [start, time.thread_time()]
        gaps.clear()
        cpu_gaps.clear()
        # The last message painted at the bottom (its row is `last` once all are in, and
        # the last row of whatever is in before that).
        run_until(lambda: delegate.painted == pane.model.rowCount() - 1 >= 0 and view.at_bottom())
        opened = time.perf_counter() - start
        run_until(lambda: loaded_at[0] > 0 and delegate.painted == last and view.at_bottom())
        loads.append(time.perf_counter() - start)
        settled = time.perf_counter() + 0.5
        run_until(lambda: time.perf_counter() > settled)  # noqa: B023 (used at once)
        opens.append((opened, max(gaps, default=0.0), max(cpu_gaps, default=0.0)))
        rss = max(rss, _rss_mb() - empty_rss)
    ticker.stop()
    opened, open_stall, open_cpu = sorted(opens)[1]
    loaded = sorted(loads)[1]

    # Scroll from the top to the bottom.
    bar = view.verticalScrollBar()
    bar.setValue(0)
    for _ in range(20):
        app.processEvents()
    step = max(72, bar.maximum() // 2_000)
    steps: list[float] = []
    step_cpu: list[float] = []  # the UI thread's CPU time of each step
    value = 0
    while value < bar.maximum():
        value += step
        began, cpu = time.perf_counter(), time.thread_time()
        bar.setValue(value)
        app.processEvents()
        steps.append(time.perf_counter() - began)
        step_cpu.append(time.thread_time() - cpu)

    # Stream a reply at the bottom.
    view.follow_bottom()
    run_until(view.at_bottom, 5.0)
    sequence = count + 1
    deltas: list[float] = []
    layouts_before = delegate.cache.layouts
    for n in range(200):
        data = {"text": f" piece {n}" if n else "The boats leave from Ribeira"}
        event = Event("ses_bench", "run_stream", sequence, "message.assistant.delta", AT, data)
        sequence += 1
        began = time.perf_counter()
        pane.append_event(event)
        view.viewport().repaint()
        app.processEvents()
        deltas.append(time.perf_counter() - began)
    layouts = delegate.cache.layouts - layouts_before
    pane.close()
    return {
        "messages": count,
        "open_s": round(opened, 3),
        "loaded_s": round(loaded, 3),
        "open_stall_ms": round(open_stall * 1000, 1),
        "open_stall_cpu_ms": round(open_cpu * 1000, 1),
        "open_runs_ms": [[round(figure * 1000, 1) for figure in run] for run in opens],
        "rss_mb": round(rss, 1),
        "scroll_steps": len(steps),
        "scroll_step_px": step,
        "scroll_max_ms": round(max(steps, default=0.0) * 1000, 1),
        "scroll_max_cpu_ms": round(max(step_cpu, default=0.0) * 1000, 1),
        "scroll_median_ms": round(sorted(steps)[len(steps) // 2] * 1000, 2) if steps else 0.0,
        "stream_deltas": len(deltas),
        "stream_layouts_per_delta": round(layouts / len(deltas), 2),
        "stream_max_ms": round(max(deltas) * 1000, 1),
        "stream_median_ms": round(sorted(deltas)[len(deltas) // 2] * 1000, 2),
        "stream_slowest_ms": [round(d * 1000, 1) for d in sorted(deltas)[-5:]],
    }


def markdown_table(saved: dict[str, Any]) -> str:
    """docs/performance.md's table, from a saved `bench/results/pane.json`."""
    lines = [
        "| messages | last message shown (s) | all rows in (s) "
        "| open stall (ms, wall / UI CPU) | memory (MB) "
        "| scroll step max (ms, wall / UI CPU) | median | layouts per delta "
        "| delta median / max (ms) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in saved["figures"]["sizes"]:
        lines.append(
            f"| {r['messages']:,} | {r['open_s']} | {r.get('loaded_s', '—')} | "
            f"{r['open_stall_ms']} / "
            f"{r['open_stall_cpu_ms']} | {r['rss_mb']} | {r['scroll_max_ms']} / "
            f"{r['scroll_max_cpu_ms']} | {r['scroll_median_ms']} | "
            f"{r['stream_layouts_per_delta']} | {r['stream_median_ms']} / {r['stream_max_ms']} |"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench pane")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--table", action="store_true", help="print the saved run as Markdown")
    parser.add_argument(
        "--content",
        choices=("short", "varied"),
        default="short",
        help="replies of three sentences, or Markdown with tables and code (saved as pane-varied)",
    )
    args = parser.parse_args(argv)
    if args.table:
        print(markdown_table(json.loads((RESULTS_DIR / "pane.json").read_text())))
        return 0
    varied = args.content == "varied"
    if args.child is not None:
        print(json.dumps(child(args.child, varied)))
        return 0
    results = []
    for count in args.sizes:
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "bench",
                "pane",
                "--child",
                str(count),
                "--content",
                args.content,
            ],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    rows = [
        [
            r["messages"],
            r["open_s"],
            r["loaded_s"],
            r["open_stall_ms"],
            r["rss_mb"],
            r["scroll_max_ms"],
            r["scroll_max_cpu_ms"],
            r["stream_layouts_per_delta"],
            r["stream_max_ms"],
        ]
        for r in results
    ]
    header = ["messages", "open s", "loaded s", "open stall ms", "MB", "scroll max ms", "(CPU)"]
    header += ["layouts/delta", "delta max ms"]
    print_table("The conversation pane (offscreen)", header, rows)
    save("pane-varied" if varied else "pane", {"targets": TARGETS, "sizes": results})
    return 0
