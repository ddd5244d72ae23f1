"""`python -m bench markdown [--repeat N]`: what one message costs through the Markdown
renderer (`ui.text.rich_text.render_message`), typical and pathological.

Per input: the median (and p95) of `render_message` alone (the parse and our HTML), and of
laying that HTML out in an `InertDocument` 700 px wide (`setHtml` plus the layout's size:
what the transcript pays once per message it shows). Typical inputs are a chat reply with
headings, a list, a table, a code block and a link (about 700 characters) and ten of them
in one message; the pathological ones are 100,000 characters each of the inputs that make
Markdown parsers slow (unclosed brackets, images and emphasis, deep quotes, a big table),
and one over the size bound that is shown as plain text.

Two figures bound what content can cost the UI thread (decision 0184):

- hostile blocks: every message of `tests.hostile_markdown.hostile_markdown` (fences of
  hostile code in allowed, refused and unknown languages, and Markdown's costly shapes) at
  `HOSTILE_SIZE` characters, rendered and laid out; the slowest is reported;
- a streamed reply: `--stream-kb` of typical replies streamed in 100-character pieces
  through `TranscriptBuilder`, each piece rendered and laid out as the pane does
  (`TranscriptItem.render`, `setHtml`, the layout); the UI thread's CPU time in total and
  for the slowest piece, and how many characters the reply kept.

Figures go to `bench/results/markdown.json`; `--table` prints that file as the table in
`docs/ui.md`.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from typing import Any

from bench.report import RESULTS_DIR, print_table, save, summarize_ms

REPLY = """\
## Reading a CSV file

The **`csv`** module handles quoting and delimiters, so you rarely split lines *by hand*.

1. Open the file with `newline=""`.
2. Wrap it in a `csv.DictReader`.
   - each row is a `dict`
   - missing fields are `None`

```python
import csv

def read_rows(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))
```

| Option | Default | What it does |
|--------|:-------:|--------------|
| `delimiter` | `,` | Separates the fields |
| `quotechar` | `"` | Wraps fields with commas |

> For very large files, iterate instead of building a list.

See the [csv documentation](https://docs.python.org/3/library/csv.html).
"""

SIZE = 100_000
HOSTILE_SIZE = 20_000
PIECE = 100


def inputs() -> dict[str, str]:
    """The measured messages by name."""
    from ui.text.rich_text import MAX_MARKDOWN_CHARS

    pathological = {
        "[": "[" * SIZE,
        "![": "![" * SIZE,
        "> (deep quote)": ">" * SIZE,
        "* after a letter": "a" + "*" * SIZE,
        "*a (emphasis)": "*a " * SIZE,
        "[a]( (links)": "[a](" * SIZE,
        "`a (code spans)": "`a" * SIZE,
        "|x|y| (table rows)": "|a|b|\n|-|-|\n" + "|x|y|\n" * SIZE,
        "&amp;": "&amp;" * SIZE,
    }
    return {
        "typical reply": REPLY,
        "ten replies in one": "\n\n".join([REPLY] * 10),
        **{f"100 KB of {name}": text[:SIZE] for name, text in pathological.items()},
        "over the size bound (plain)": "# big\n\n" + "word " * (MAX_MARKDOWN_CHARS // 5 + 1),
    }


def _time(action: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return samples


def measure(repeat: int, repeat_pathological: int) -> dict[str, Any]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from ui.text.code_highlight import warm_up
    from ui.text.rich_text import InertDocument, render_message

    warm_up()  # code coloured, as once the window has loaded its lexers
    app = QApplication.instance() or QApplication(["bench-markdown"])
    del app
    figures: dict[str, Any] = {}
    for name, text in inputs().items():
        times = repeat if len(text) < 20_000 else repeat_pathological
        html = render_message(text).html

        def layout(html: str = html) -> None:
            doc = InertDocument()
            doc.setHtml(html)
            doc.setTextWidth(700)
            doc.size()

        def render(text: str = text) -> None:
            render_message(text)

        figures[name] = {
            "chars": len(text),
            "render": summarize_ms(_time(render, times)),
            "layout": summarize_ms(_time(layout, times)),
        }
    return figures


def _laid_out(html: str) -> None:
    from ui.text.rich_text import InertDocument

    doc = InertDocument()
    doc.setHtml(html)
    doc.setTextWidth(700)
    doc.size()


def hostile_blocks() -> dict[str, Any]:
    """The slowest hostile message (render, then layout), in the UI thread's CPU time."""
    from tests.hostile_markdown import hostile_markdown
    from ui.text.code_highlight import warm_up
    from ui.text.rich_text import render_message

    warm_up()

    worst: tuple[float, str, float] = (0.0, "", 0.0)
    for name, text in hostile_markdown(HOSTILE_SIZE).items():
        start = time.thread_time()
        html = render_message(text).html
        rendered = time.thread_time()
        _laid_out(html)
        worst = max(worst, (time.thread_time() - start, name, rendered - start))
    total, name, render = worst
    return {"chars": HOSTILE_SIZE, "worst": name, "render_ms": round(render * 1000, 1),
            "total_ms": round(total * 1000, 1)}  # fmt: skip


def streamed(kb: int) -> dict[str, Any]:
    """A reply of `kb` KB streamed in `PIECE`-character pieces, rendered and laid out per
    piece through the delegate's document cache: the UI thread's CPU time."""
    from PySide6.QtGui import QFont

    from sync import Event
    from ui.pane.transcript_delegate import DocumentCache
    from ui.pane.transcript_events import TranscriptBuilder
    from ui.pane.transcript_model import TranscriptModel

    text = ("\n\n".join([REPLY] * (kb * 1000 // len(REPLY) + 1)))[: kb * 1000]
    model = TranscriptModel()
    builder = TranscriptBuilder(model)
    cache, font = DocumentCache(), QFont()
    at = "2026-11-30T05:14:13.123456Z"
    slowest, slowest_render, render_s, version = 0.0, 0.0, 0.0, -1
    start = time.thread_time()
    for n, first in enumerate(range(0, len(text), PIECE)):
        data = {"text": text[first : first + PIECE]}
        began = time.thread_time()
        builder.append_event(Event("ses", "run", n + 1, "message.assistant.delta", at, data))
        item = model.item(0)
        if item.version != version:  # the pane lays out a row whose words changed
            item.render(False)
            rendered = time.thread_time() - began
            render_s, slowest_render = render_s + rendered, max(slowest_render, rendered)
            cache.get(item, 700, False, font)  # as the delegate does: the tail laid out
            version = item.version
        slowest = max(slowest, time.thread_time() - began)
    return {"chars": len(text), "kept": len(model.item(0).text), "pieces": len(text) // PIECE,
            "total_s": round(time.thread_time() - start, 2), "render_s": round(render_s, 2),
            "slowest_piece_ms": round(slowest * 1000, 1),
            "slowest_render_ms": round(slowest_render * 1000, 1)}  # fmt: skip


def _md_text(text: str) -> str:
    """`text` as literal Markdown (the inputs' names are made of Markdown's punctuation)."""
    return "".join("&amp;" if c == "&" else f"\\{c}" if c in "\\`*_[]|<>!#" else c for c in text)


def table(payload: dict[str, Any]) -> str:
    """The saved run (`bench/results/markdown.json`) as the Markdown table docs/ui.md
    quotes."""
    lines = [
        "| input | characters | render, median ms (p95) | layout, median ms (p95) |",
        "|---|---:|---:|---:|",
    ]
    for name, f in payload["figures"]["messages"].items():
        render, layout = f["render"], f["layout"]
        cells = [
            _md_text(name),
            f"{f['chars']:,}",
            f"{render['median_ms']:.1f} ({render['p95_ms']:.1f})",
            f"{layout['median_ms']:.1f} ({layout['p95_ms']:.1f})",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench markdown")
    parser.add_argument("--repeat", type=int, default=50, help="runs per typical input")
    parser.add_argument("--repeat-pathological", type=int, default=5)
    parser.add_argument(
        "--table", action="store_true", help="print the saved run as docs/ui.md's table"
    )
    parser.add_argument("--stream-kb", type=int, default=100, help="the streamed reply's size")
    parser.add_argument("--bounds-only", action="store_true", help="only the two bounds")
    args = parser.parse_args(argv)
    if args.table:
        print(table(json.loads((RESULTS_DIR / "markdown.json").read_text())))
        return 0
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(["bench-markdown"])
    bounds = {"hostile_blocks": hostile_blocks(), "streamed": streamed(args.stream_kb)}
    del app
    print(json.dumps(bounds))
    if args.bounds_only:
        return 0
    figures = measure(args.repeat, args.repeat_pathological)
    rows = [
        [
            name,
            f["chars"],
            f["render"]["median_ms"],
            f["render"]["p95_ms"],
            f["layout"]["median_ms"],
            f["layout"]["p95_ms"],
        ]
        for name, f in figures.items()
    ]
    header = ["input", "chars", "render ms", "p95", "layout ms", "p95"]
    print_table("Markdown: one message through render_message, then laid out", header, rows)
    save("markdown", {"messages": figures, "width_px": 700, **bounds})
    return 0
