"""The chat loop against a real stub server: focus stays in the composer after Send and
comes back after a dialog; Stop and "Replying… N s" stay for a run's whole life, whatever
the run streams (keep-alive dots included), driven by the run's state."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from tests.ui.conftest import Harness, run, until


def _focus() -> object:
    return QApplication.focusWidget()


def test_focus_stays_in_the_composer_after_send(harness: Harness) -> None:
    sid = harness.create("Focus", "2026-11-29T09:00:00.000000Z")
    run(harness.loop, harness.sync())
    harness.select(sid)
    pane = harness.window.pane
    harness.window.activateWindow()
    pane.composer.setFocus()
    run(harness.loop, until(lambda: _focus() is pane.composer, what="the composer's focus"))
    pane.composer.setPlainText("hello there")

    async def scenario() -> None:
        pane.send_button.click()
        await harness.controller.wait_idle()
        await until(lambda: not pane.stop_button.isVisible(), what="the reply's end")

    run(harness.loop, scenario())
    assert _focus() is pane.composer


def test_stop_and_replying_stay_for_a_run_that_streams_only_keep_alives(
    harness: Harness,
) -> None:
    sid = harness.create("Long wait", "2026-11-29T09:00:00.000000Z")
    run(harness.loop, harness.sync())
    harness.select(sid)
    pane = harness.window.pane
    pane.composer.setPlainText("/wait 15")
    seen: list[str] = []

    async def scenario() -> None:
        pane.send_button.click()
        await until(lambda: pane.stop_button.isVisible(), what="Stop")
        # Four keep-alive dots later, Stop and the counting indicator are still there.
        await until(
            lambda: "4 s" in pane.indicator.text() or not pane.stop_button.isVisible(),
            timeout=10,
            what="four seconds of the run",
        )
        seen.append(pane.indicator.text())
        assert pane.stop_button.isVisible() and pane.stop_button.isEnabled()
        pane.stop_button.click()
        await until(lambda: not pane.stop_button.isVisible(), what="the stopped run")

    run(harness.loop, scenario())
    assert seen and "Replying… 4 s" in seen[0]


def test_a_run_the_sidebar_lists_as_running_shows_stop_in_the_pane(harness: Harness) -> None:
    sid = harness.create("Started elsewhere", "2026-11-29T09:00:00.000000Z")
    run(harness.loop, harness.sync())
    harness.select(sid)
    pane = harness.window.pane
    assert not pane.stop_button.isVisible()
    body = {"input": {"role": "user", "content": [{"type": "text", "text": "/wait 30"}]}}
    assert harness.api().post(f"/v1/sessions/{sid}/runs", json=body).status_code == 202

    async def scenario() -> None:
        await harness.sync()  # the row now says Running
        await until(lambda: pane.stop_button.isVisible(), what="Stop")
        await harness.sync()  # another pass listing the same run changes nothing
        assert pane.stop_button.isVisible() and pane.indicator.isVisible()
        pane.stop_button.click()
        await until(lambda: not pane.stop_button.isVisible(), what="the stopped run")

    run(harness.loop, scenario())
