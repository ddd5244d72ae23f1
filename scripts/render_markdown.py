"""Render a sample assistant reply through `ui.text.rich_text` to docs/screenshots/, light and
dark (`markdown_reply.png`, `markdown_reply_dark.png`), 700 px wide, offscreen.

The reply is laid out in the transcript's own `InertDocument` and painted in a bubble of
the window's assistant colours (`ui.theme.style`), the way a chat pane shows it.

    .venv/bin/python scripts/render_markdown.py [OUTPUT_DIR]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QColor, QFont, QImage, QPainter, QPalette
from PySide6.QtWidgets import QApplication

from ui.text.code_highlight import warm_up
from ui.text.rich_text import InertDocument, render_message
from ui.theme import style

WIDTH = 700
PAD = 14

SAMPLE = """\
## Reading a CSV file in Python

Python's standard library has everything you need. The **`csv`** module handles quoting \
and delimiters, so you rarely have to split lines *by hand*.

1. Open the file with `newline=""`.
2. Wrap it in a `csv.DictReader`.
3. Iterate over the rows:
   - each row is a `dict`
   - missing fields are ~~errors~~ `None`

```python
import csv
from pathlib import Path

def read_rows(path: Path) -> list[dict[str, str]]:
    \"\"\"Every row of the file, keyed by its header.\"\"\"
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))  # 10,000 rows: ~8 ms
```

| Option       | Default | What it does            |
|--------------|:-------:|-------------------------|
| `delimiter`  | `,`     | Separates the fields    |
| `quotechar`  | `"`     | Wraps fields with commas|

> Tip: for very large files, iterate instead of building a list.

See the [csv module documentation](https://docs.python.org/3/library/csv.html) for more.
"""


def render(out: Path, *, dark: bool) -> Path:
    colours = style._DARK if dark else style._LIGHT
    warm_up()  # the code coloured, as once the window has loaded its lexers
    rendered = render_message(SAMPLE, dark=dark)
    doc = InertDocument()
    font = QFont(QApplication.font())
    font.setPointSizeF(10.0)
    doc.setDefaultFont(font)
    doc.setDocumentMargin(0)
    doc.setHtml(rendered.html)
    doc.setTextWidth(WIDTH - 4 * PAD)
    height = int(doc.size().height()) + 4 * PAD
    image = QImage(WIDTH, height, QImage.Format.Format_ARGB32)
    window = "#1e2127" if dark else "#ffffff"
    image.fill(QColor(window))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(colours["assistant_bg"]))
    painter.drawRoundedRect(QRectF(PAD, PAD, WIDTH - 2 * PAD, height - 2 * PAD), 10, 10)
    painter.translate(2 * PAD, 2 * PAD)
    context = QAbstractTextDocumentLayout.PaintContext()
    palette = QPalette(context.palette)
    palette.setColor(QPalette.ColorRole.Text, QColor(colours["assistant_fg"]))
    context.palette = palette
    doc.documentLayout().draw(painter, context)
    painter.end()
    path = out / f"markdown_reply{'_dark' if dark else ''}.png"
    image.save(str(path))
    return path


def main() -> int:
    out = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(__file__).parent.parent / "docs/screenshots"
    )
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([sys.argv[0]])
    del app
    for dark in (False, True):
        print(render(out, dark=dark))
    return 0


if __name__ == "__main__":
    sys.exit(main())
