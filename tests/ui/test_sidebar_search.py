"""Search as you type in the sidebar (CONTRACT §11): titles and message text from the
mirror, results in activity order with the matched words highlighted, inert snippets. A
real window, engine and stub server."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QFont, QImage, QPainter

from sync.mirror.search_text import Snippet
from tests.ui.conftest import Harness, run, until
from ui.sidebar.snippet_layout import one_line, snippet_layout


def ts(hour: int, minute: int = 0) -> str:
    return f"2026-11-29T{hour:02d}:{minute:02d}:00.000000Z"


def _msg(text: str) -> dict[str, object]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _say(harness: Harness, session_id: str, text: str) -> None:
    """Another device sends `text` in `session_id` and its run ends."""
    other = harness.api()
    started = other.post(f"/v1/sessions/{session_id}/runs", json={"input": _msg(text)})
    assert started.status_code in (200, 201, 202), started.text
    run_id = started.json()["id"]
    run(
        harness.loop,
        until(
            lambda: (
                other.get(f"/v1/runs/{run_id}").json()["status"]
                in ("completed", "failed", "cancelled")
            ),
            what="the run to end",
        ),
    )


def _type(harness: Harness, text: str, expected: list[str]) -> None:
    harness.window.filter.setText(text)
    search = harness.controller.search

    async def shown() -> None:
        await until(
            lambda: search.shown_for == text and harness.ids() == expected,
            what=f"the results for {text!r}",
        )
        await harness.controller.wait_idle()

    run(harness.loop, shown())


def _matched(harness: Harness, session_id: str) -> list[str]:
    found = harness.controller.search.snippet_of(session_id)
    assert found is not None, "a snippet for the hit"
    return [found.text[start:end] for start, end in found.ranges]


def test_typing_finds_words_of_message_text_accented_and_cjk_with_the_match_highlighted(
    harness: Harness,
) -> None:
    trip = harness.create("Weekend plans", ts(9))
    other = harness.create("Groceries", ts(10))
    _say(harness, trip, "Then the Musée d'Orsay, and 東京タワー next spring")
    run(harness.loop, harness.sync())
    everyone = harness.ids()
    assert set(everyone) == {trip, other}

    _type(harness, "musee", [trip])
    assert _matched(harness, trip) == ["Musée"]
    _type(harness, "東京タ", [trip])
    assert _matched(harness, trip) == ["東京タ"]
    _type(harness, "groc", [other])  # a title still matches as before
    _type(harness, "", everyone)
    assert harness.controller.search.snippet_of(trip) is None


def test_results_keep_the_selection_and_clearing_restores_the_sidebar(harness: Harness) -> None:
    first = harness.create("Tram routes", ts(9))
    second = harness.create("Bus routes", ts(10))
    third = harness.create("Ferry times", ts(11))
    run(harness.loop, harness.sync())
    harness.select(first)
    resets: list[None] = []
    harness.window.model.modelReset.connect(lambda: resets.append(None))

    _type(harness, "routes", [second, first])
    assert harness.window.selected_ids() == [first]
    _type(harness, "", [third, second, first])
    assert harness.window.selected_ids() == [first]
    assert resets == [], "diffed updates, never a reset"


def test_a_conversation_deleted_elsewhere_is_no_longer_found_after_one_pass(
    harness: Harness,
) -> None:
    doomed = harness.create("Lisbon", ts(9))
    _say(harness, doomed, "the secret word is zanzibar")
    run(harness.loop, harness.sync())
    _type(harness, "zanzibar", [doomed])

    assert harness.api().delete(f"/v1/sessions/{doomed}").status_code == 204
    run(harness.loop, harness.sync())
    run(harness.loop, until(lambda: harness.ids() == [], what="the hit gone"))


def test_a_hostile_message_is_found_and_its_snippet_stays_plain_text(
    harness: Harness, tmp_path: Path
) -> None:
    sid = harness.create("Hostile", ts(9))
    _say(harness, sid, "<b>bold</b> &amp; \u202eevil\nline tramway <img src=x>")
    run(harness.loop, harness.sync())
    _type(harness, "tramway", [sid])
    assert _matched(harness, sid) == ["tramway"]
    shot = harness.window.list.grab()  # the delegate paints it (looked at: literal text)
    assert not shot.isNull() and shot.save(str(tmp_path / "hostile_search.png"))


def test_a_snippet_is_laid_out_as_one_line_of_literal_text_with_utf16_ranges() -> None:
    text = "😀 <b>x</b> &amp;\u202e\nmatch\u2069"
    start = text.index("match")
    layout = snippet_layout(Snippet(text, ((start, start + 5),)), QFont(), 400.0, QColor("#ffd54f"))
    shown = layout.text()
    assert shown == one_line(text)
    assert "<b>x</b> &amp;" in shown, "markup shows as typed"
    assert "\n" not in shown and "\u202e" not in shown and "\u2069" not in shown
    assert layout.lineCount() == 1
    (highlight,) = layout.formats()
    assert (highlight.start, highlight.length) == (start + 1, 5)  # 😀 is two UTF-16 units
    image = QImage(420, 30, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    layout.draw(painter, QPointF(0, 0))
    painter.end()


def test_a_search_of_more_words_than_it_can_hold_says_so_instead_of_failing(
    harness: Harness,
) -> None:
    """A pasted page is refused in words in the sidebar's empty state, not reported as a
    failure to list the conversations (nor as a damaged mirror)."""
    plans = harness.create("Weekend plans", ts(9))
    run(harness.loop, harness.sync())
    pasted = " ".join(f"word{n}" for n in range(1000))
    _type(harness, pasted, [])
    assert harness.window.sidebar_empty.text() == "A search can hold at most 32 words."
    assert harness.window.pane.notice.failure is None
    _type(harness, "weekend", [plans])
    assert harness.controller.search.refused is None
