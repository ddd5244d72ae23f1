"""The sidebar's scroll position survives updates that change rows above the viewport."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import QPoint

from app.loop import ConvergeEventLoop
from tests.ui.conftest import row, run, until
from ui.main_window import MainWindow


def test_rows_changing_above_the_viewport_do_not_shift_what_the_user_sees(
    loop: ConvergeEventLoop,
) -> None:
    window = MainWindow()
    window.show()
    rows = [row(f"ses_{i:05d}", f"Conversation {i}") for i in range(3000)]

    def top_id() -> str:
        return str(window.list.indexAt(QPoint(1, 1)).data(window.model.IdRole))

    async def scenario() -> tuple[str, str]:
        await window.model.update(rows)
        bar = window.list.verticalScrollBar()
        await until(lambda: bar.maximum() > 50_000, what="the list laid out")
        bar.setValue(40_000)
        await asyncio.sleep(0)
        before = top_id()
        # Above the viewport: two new rows, one removed, one moved from below to the top.
        moved = rows[2500]
        new = [row("ses_new_a"), moved, row("ses_new_b"), *rows[:5], *rows[6:2500], *rows[2501:]]
        await window.model.update(new)
        await until(lambda: top_id() == before, timeout=5, what="the same top row")
        return before, top_id()

    before, after = run(loop, scenario())
    assert before == after
    window.close()


def test_at_the_top_new_rows_come_into_view(loop: ConvergeEventLoop) -> None:
    window = MainWindow()
    window.show()
    rows = [row(f"ses_{i:05d}") for i in range(100)]

    async def scenario() -> None:
        await window.model.update(rows)
        await window.model.update([row("ses_newest"), *rows])

    run(loop, scenario())
    assert window.list.verticalScrollBar().value() == 0
    assert window.list.indexAt(QPoint(1, 1)).data(window.model.IdRole) == "ses_newest"
    window.close()
