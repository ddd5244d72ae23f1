"""A code block whose lexer is not loaded yet costs the UI thread no import and no compiled
expression: it is shown uncoloured, its lexer is loaded off the UI thread before the others,
and its row is rendered again in colour once that lexer is in (decision 0223).

In a fresh process, the only way to see which modules the UI thread imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys

CHILD = r"""
import json
import os
import sys
import threading

from PySide6.QtGui import QTextFormat
from PySide6.QtWidgets import QApplication

qt_app = QApplication([])

from ui.pane.transcript_model import Kind, TranscriptItem, TranscriptModel
from ui.pane.transcript_view import TranscriptView
from ui.text import code_highlight

COLOURED = '<span style="color:'


def lexer_modules():
    return sorted(n for n in sys.modules if n.startswith("pygments.lexers.") and "._" not in n)


def colours(doc):
    found = set()
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.hasProperty(QTextFormat.Property.ForegroundBrush):
                found.add(fmt.foreground().color().name())
            it += 1
        block = block.next()
    return len(found)


def shown(view, item):
    delegate = view.delegate
    doc = delegate.cache.get(item, delegate.text_width(item), delegate.dark, view.font())
    return {
        "html_coloured": COLOURED in item.render(delegate.dark).html,
        "document_colours": colours(doc),
        "measured_now": item.size is not None and item.size[1] == item.version,
        "uncoloured": getattr(item, "uncoloured", None),
    }


model = TranscriptModel()
view = TranscriptView(model)
view.resize(800, 600)
view.show()
code = "```python\ndef f(x):\n    return x + 1\n```\n"
item = TranscriptItem(Kind.ASSISTANT, "Run this:\n\n" + code)
model.reset([item])
qt_app.processEvents()
view.repaint()
before = shown(view, item)
before["lexer_modules"] = lexer_modules()
before["over_budget"] = len(code_highlight._over_budget)
before["first_loaded"] = getattr(code_highlight, "pending", lambda: None)()
print(json.dumps(before), flush=True)

recoloured = 0
while (name := code_highlight.pending()) is not None:
    worker = threading.Thread(target=code_highlight.load, args=(name,))
    worker.start()
    worker.join()
    if code_highlight.recolour_due():
        recoloured += 1
        view.recolour()
qt_app.processEvents()
view.repaint()
after = shown(view, item)
after["recoloured"] = recoloured
print(json.dumps(after))
"""


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    """`code` run by a fresh, offscreen interpreter: the only way to see what it imports."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )


def test_a_block_waits_uncoloured_for_its_lexer_loaded_off_the_ui_thread() -> None:
    result = _fresh(CHILD)
    lines = result.stdout.strip().splitlines()
    assert lines, result.stderr[-2000:]
    before = json.loads(lines[0])
    # Shown and painted on the UI thread: no lexer module imported, the block plain, and
    # not remembered as over its budget.
    assert before["lexer_modules"] == []
    assert not before["html_coloured"]
    assert before["uncoloured"]
    assert before["over_budget"] == 0
    assert before["first_loaded"] == "PythonLexer"  # the lexer a shown block waits for
    # Loaded on a worker thread: the row is rendered and measured again, in colour, once.
    assert result.returncode == 0, result.stderr[-2000:]
    after = json.loads(lines[-1])
    assert after["recoloured"] == 1
    assert after["html_coloured"]
    assert after["document_colours"] > before["document_colours"]
    assert after["measured_now"]
    assert not after["uncoloured"]


NESTED = r"""
import sys

from ui.text import code_highlight

code_highlight.load("MarkdownLexer")
before = set(sys.modules)
code_highlight.highlight("# notes\n\n```brainfuck\n+[>+<-]\n```\n", "markdown", dark=False)
print(sorted(n for n in set(sys.modules) - before if n.startswith("pygments.lexers.")))
"""


def test_a_fence_inside_a_markdown_block_loads_no_lexer() -> None:
    """Pygments' Markdown lexer would look up a nested fence's lexer by name, any lexer at
    all, and import it on the UI thread: the allowlist's Markdown colours its own syntax and
    leaves a nested fence's code as one string."""
    done = _fresh(NESTED)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().replace("'", '"')) == []
