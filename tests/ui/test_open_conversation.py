"""The open conversation is one unit: opening another one (or closing the window) cancels
every task of the previous one, so nothing of it reaches the pane afterwards; a message or
decision already sent still goes. A real window, engine and stub server; requests are held
at a gate in the fault transport, so every interleaving is forced, not timed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import QPushButton

from tests.ui.conftest import Harness, run, until


def ts(hour: int) -> str:
    return f"2026-11-29T{hour:02d}:00:00.000000Z"


def _msg(text: str) -> dict[str, object]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _bubbles(harness: Harness) -> list[str]:
    return [text for _kind, text in harness.window.pane.messages()]


class Gate:
    """Holds matching requests in the transport until `release()` (then lets them through,
    or refuses them as a lost connection would when `refuse`)."""

    def __init__(self, *, refuse: bool = False) -> None:
        self.entered = asyncio.Event()
        self._open = asyncio.Event()
        self._refuse = refuse

    async def __call__(self, request: httpx.Request) -> None:
        self.entered.set()
        await self._open.wait()
        if self._refuse:
            raise httpx.ConnectError("injected: connection refused", request=request)

    def release(self) -> None:
        self._open.set()


def _rows_only(harness: Harness, session_id: str) -> None:
    """A pass that mirrors the rows but not this conversation's transcript (opening it
    then asks the server for it, which the tests hold at a gate)."""
    harness.faults.add("GET", rf"/v1/sessions/{session_id}/events", "refuse", times=None)

    async def rows() -> None:
        await harness.engine.reconcile()
        await harness.engine.content.wait_idle()
        await harness.controller.refresh_now()

    run(harness.loop, rows())
    harness.faults.clear()


def _make_current(harness: Harness, session_id: str) -> None:
    """Click a row (without waiting for the controller: a held request would never end)."""
    index = harness.window.model.index_of(session_id)
    harness.window.list.selectionModel().setCurrentIndex(
        index, QItemSelectionModel.SelectionFlag.ClearAndSelect
    )


def _waiting_for_approval(harness: Harness, title: str, hour: int) -> str:
    """A conversation whose run waits for an approval (active until someone decides)."""
    sid = harness.create(title, ts(hour))
    started = harness.api().post(f"/v1/sessions/{sid}/runs", json={"input": _msg("/approve x")})
    assert started.status_code in (200, 201, 202), started.text
    return sid


def _approve_button(harness: Harness) -> Callable[[], QPushButton | None]:
    def find() -> QPushButton | None:
        for button in harness.window.pane.transcript.findChildren(QPushButton):
            if button.text() == "Approve" and button.isEnabled():
                return button
        return None

    return find


def test_a_new_conversation_sent_just_before_opening_another_does_not_take_the_pane_back(
    harness: Harness,
) -> None:
    other = harness.create("Bravo", ts(9))
    run(harness.loop, harness.sync())
    pane = harness.window.pane
    gate = Gate()
    harness.faults.add("POST", r"/v1/sessions/[^/]+/runs", "hook", hook=gate)

    async def scenario() -> None:
        harness.controller.new_conversation()
        draft = harness.controller.conversation
        pane.composer.setPlainText("Hello")
        pane.send_button.click()
        await gate.entered.wait()  # the message is on its way
        _make_current(harness, other)  # the user opens another conversation meanwhile
        assert draft.closed and all(task.cancelling() or task.done() for task in draft.tasks)
        gate.release()
        await harness.controller.wait_idle()  # the send completes, the reply runs
        await harness.sync()

    run(harness.loop, scenario())
    assert pane.session_id == other
    assert harness.window.current_id() == other
    assert _bubbles(harness) == ["Bravo"]
    assert not pane.stop_button.isVisible()
    # The message was not cut by the click: its conversation exists, listed second.
    assert harness.window.model.index(0, 0).data() == "Hello"
    assert pane.composer.toPlainText() == ""  # it went with the message


def test_a_message_that_fails_after_the_user_moved_on_is_still_reported(
    harness: Harness,
) -> None:
    first = harness.create("Alpha", ts(8))
    second = harness.create("Bravo", ts(9))
    run(harness.loop, harness.sync())
    harness.select(first)
    pane = harness.window.pane
    gate = Gate(refuse=True)
    harness.faults.add("POST", rf"/v1/sessions/{first}/runs", "hook", hook=gate)

    async def scenario() -> None:
        pane.composer.setPlainText("Are you there?")
        pane.send_button.click()
        await gate.entered.wait()
        _make_current(harness, second)
        gate.release()
        await harness.controller.wait_idle()

    run(harness.loop, scenario())
    assert pane.session_id == second
    assert pane.banner.text() == ""  # Bravo's pane says nothing about Alpha's message
    status = harness.window.status
    assert status.text() == "Couldn't send the message."
    assert status.property("error") is True


def test_a_turn_sent_just_before_opening_another_conversation_leaves_its_live_reply_alone(
    harness: Harness,
) -> None:
    first = harness.create("Alpha", ts(8))
    waiting = _waiting_for_approval(harness, "Bravo", 9)
    run(harness.loop, harness.sync())
    harness.select(first)
    pane = harness.window.pane
    gate = Gate()
    harness.faults.add("POST", rf"/v1/sessions/{first}/runs", "hook", hook=gate)
    approve = _approve_button(harness)

    async def scenario() -> None:
        pane.composer.setPlainText("One more thing")
        pane.send_button.click()
        await gate.entered.wait()
        _make_current(harness, waiting)
        await until(
            lambda: (
                approve() is not None and harness.controller.conversation.follow_task is not None
            ),
            what="the approval card (from the mirror), and its run followed live",
        )
        gate.release()
        await harness.controller.wait_idle()  # the turn of Alpha was sent meanwhile
        assert pane.session_id == waiting
        assert pane.stop_button.isVisible(), "Bravo's reply is still followed"
        button = approve()
        assert button is not None
        button.click()
        # The resolution arrives through Bravo's stream, which must still be open.
        await until(lambda: not pane.stop_button.isVisible(), 10, "Bravo's run ending live")

    run(harness.loop, scenario())
    assert pane.session_id == waiting
    assert not any("One more thing" in text for text in _bubbles(harness))


def test_opening_another_conversation_while_one_loads_never_shows_the_first(
    harness: Harness,
) -> None:
    first = harness.create("Alpha", ts(8))
    second = harness.create("Bravo", ts(9))
    _rows_only(harness, first)
    gate = Gate()
    harness.faults.add("GET", rf"/v1/sessions/{first}/events", "hook", hook=gate)

    async def scenario() -> None:
        _make_current(harness, first)
        await gate.entered.wait()  # Alpha's transcript is on its way
        loading = harness.controller.conversation
        _make_current(harness, second)
        assert loading.closed
        gate.release()
        await harness.controller.wait_idle()
        assert not loading.tasks, "no task of Alpha survives the switch"

    run(harness.loop, scenario())
    pane = harness.window.pane
    assert pane.session_id == second
    assert _bubbles(harness) == ["Bravo"]
    assert pane.banner.text() == ""


def test_opening_another_conversation_cancels_the_live_reply_it_followed(
    harness: Harness,
) -> None:
    waiting = _waiting_for_approval(harness, "Alpha", 8)
    quiet = harness.create("Bravo", ts(9))
    run(harness.loop, harness.sync())
    pane = harness.window.pane
    approve = _approve_button(harness)

    async def scenario() -> None:
        _make_current(harness, waiting)
        await until(
            lambda: (
                approve() is not None and harness.controller.conversation.follow_task is not None
            ),
            what="the approval card (from the mirror), and its run followed live",
        )
        following = harness.controller.conversation
        stream = following.follow_task
        assert stream is not None and not stream.done()
        await harness.select_async(quiet)
        assert following.closed and stream.cancelled()
        assert not following.tasks
        assert not pane.stop_button.isVisible()

    run(harness.loop, scenario())
    assert _bubbles(harness) == ["Bravo"]


def test_closing_the_window_cancels_the_open_conversation(harness: Harness) -> None:
    waiting = _waiting_for_approval(harness, "Alpha", 8)
    run(harness.loop, harness.sync())
    approve = _approve_button(harness)

    async def scenario() -> None:
        _make_current(harness, waiting)
        await until(
            lambda: (
                approve() is not None and harness.controller.conversation.follow_task is not None
            ),
            what="the approval card (from the mirror), and its run followed live",
        )
        conversation = harness.controller.conversation
        assert conversation.tasks
        await harness.controller.shutdown()
        assert conversation.closed and not conversation.tasks

    run(harness.loop, scenario())
