"""Opening a conversation reads the mirror first (CONTRACT §11): the window against a real
stub server and a real engine, the server stopped or refused where the test says so."""

from __future__ import annotations

from sync.events import TriggerReason
from tests.ui.conftest import Harness, run, until


def ts(hour: int, minute: int = 0) -> str:
    return f"2026-11-29T{hour:02d}:{minute:02d}:00.000000Z"


def _bubbles(harness: Harness) -> list[str]:
    return [text for _kind, text in harness.window.pane.messages()]


def _msg(text: str) -> dict[str, object]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def test_a_mirrored_conversation_opens_with_the_server_stopped_and_says_it_is_the_saved_copy(
    harness: Harness,
) -> None:
    sid = harness.create("Packing list for Lisbon", ts(9))
    run(harness.loop, harness.sync())
    harness.server.stop()
    run(harness.loop, harness.engine.reconcile(TriggerReason.MANUAL))
    assert harness.window.offline_banner.isVisible()

    harness.select(sid)
    pane = harness.window.pane
    assert _bubbles(harness) == ["Packing list for Lisbon"]
    banner = pane.banner.text()
    assert banner.startswith("Offline – showing the copy saved on this device")
    assert "last message:" in banner
    assert "http://" not in banner and "Loading" not in banner


def test_a_transcript_never_fetched_says_offline_it_cannot_be_shown_until_back_online(
    harness: Harness,
) -> None:
    sid = harness.create("Budget for the move", ts(9))
    harness.faults.add("GET", r".*/events.*", "refuse", times=None)  # rows only

    async def rows_without_content() -> None:
        await harness.engine.reconcile(TriggerReason.MANUAL)
        await harness.engine.content.wait_idle()
        await harness.controller.refresh_now()

    run(harness.loop, rows_without_content())
    harness.faults.add("GET", r".*", "refuse", times=None)
    run(harness.loop, harness.engine.reconcile(TriggerReason.MANUAL))
    harness.select(sid)
    banner = harness.window.pane.banner.text()
    assert "isn't saved on this device" in banner and "back" in banner
    assert _bubbles(harness) == []

    harness.faults.clear()

    async def reconnect() -> None:
        await harness.engine.reconcile(TriggerReason.CONNECT)
        await until(lambda: _bubbles(harness) == ["Budget for the move"], what="its transcript")
        await harness.controller.wait_idle()

    run(harness.loop, reconnect())
    assert harness.window.pane.banner.text() == ""


def test_a_message_from_another_device_is_appended_to_the_open_conversation_after_a_pass(
    harness: Harness,
) -> None:
    sid = harness.create("Trip to Porto", ts(9))
    run(harness.loop, harness.sync())
    harness.select(sid)
    first = harness.window.pane.model.items()
    assert _bubbles(harness) == ["Trip to Porto"]

    other = harness.api()  # another device
    started = other.post(f"/v1/sessions/{sid}/runs", json={"input": _msg("And the trams?")})
    assert started.status_code in (200, 201, 202), started.text
    run_id = started.json()["id"]

    async def pass_after_the_run() -> None:
        await until(
            lambda: (
                other.get(f"/v1/runs/{run_id}").json()["status"]
                in ("completed", "failed", "cancelled")
            ),
            what="the other device's run to end",
        )
        await harness.sync()
        await until(lambda: "And the trams?" in _bubbles(harness), what="the new message")
        await harness.controller.wait_idle()

    run(harness.loop, pass_after_the_run())
    shown = harness.window.pane.model.items()
    assert shown[0] is first[0], "appended after what was shown, not drawn again"
    assert _bubbles(harness).count("And the trams?") == 1
