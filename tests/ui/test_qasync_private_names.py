"""qasync's private names that `app.loop.ConvergeEventLoop` relies on still exist.

`app/loop.py` reaches into qasync 0.28 in three places, none of them public API:

- `ConvergeEventLoop._add_callback` overrides qasync's `QEventLoop._add_callback`, through
  which qasync routes `call_soon`/`call_later`/`call_at`: if qasync stopped calling it, the
  override would silently stop running callbacks only while the loop runs.
- `ConvergeEventLoop._add_callback` and `close()` use the loop's `_timer` (qasync's
  `_SimpleTimer`) and its `add_callback`.
- `ConvergeEventLoop.close()` kills the Qt timers listed in the timer's name-mangled
  `_SimpleTimer__callbacks` dict. It reads both with `getattr(..., default)`, so a qasync
  that renamed them would not fail there: the pending Qt timers would outlive the loop again
  (the segfault in `QTimerInfoList::activateTimers` its docstring describes). This test is
  what fails instead.
"""

from __future__ import annotations

import qasync

from app.loop import ConvergeEventLoop

WHO = "app/loop.py ConvergeEventLoop"


def test_qasync_routes_every_callback_through_the_private_add_callback() -> None:
    defined = [
        cls
        for cls in qasync.QEventLoop.__mro__
        if cls.__module__.startswith("qasync") and callable(vars(cls).get("_add_callback"))
    ]
    assert defined, f"qasync.QEventLoop._add_callback is gone: {WHO}._add_callback overrides it"


def test_the_loops_private_timer_and_its_callbacks_dict_exist(loop: ConvergeEventLoop) -> None:
    timer = getattr(loop, "_timer", None)
    assert timer is not None, f"qasync's QEventLoop has no `_timer` any more: {WHO} uses it"
    assert callable(getattr(timer, "add_callback", None)), (
        f"qasync's `_timer.add_callback` is gone: {WHO}._add_callback calls it"
    )
    callbacks = getattr(timer, "_SimpleTimer__callbacks", None)
    assert isinstance(callbacks, dict), (
        f"qasync's `_SimpleTimer__callbacks` is gone: {WHO}.close() kills the Qt timers it "
        "lists, and would silently leave them running"
    )
    # And `call_soon` reaches the override, which files the callback in that dict.
    before = len(callbacks)
    handle = loop.call_soon(lambda: None)
    assert len(callbacks) == before + 1, (
        f"qasync's call_soon no longer goes through `_add_callback` to `_timer`: {WHO} "
        "overrides `_add_callback` to run callbacks only while the loop runs"
    )
    handle.cancel()
