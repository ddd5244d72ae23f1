"""Dialogs die by reference counting, on the GUI thread, the moment their last reference goes.

A Qt widget kept alive by a reference cycle is freed by the garbage collector, and Python
collects in whichever thread happens to allocate next: a worker of `asyncio.to_thread`, a
server thread. A widget destroyed off the GUI thread left Qt a dangling active window, and
the next `show()` crashed in `QApplicationPrivate::notifyActiveWindowChange` (a settings
dialog's rows kept a Python reference back to the dialog: the suite died with a
segmentation fault). So: no cycles through a dialog.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator

import pytest
from PySide6.QtWidgets import QDialog

from ui.dialogs.settings import ConnectionSettings, SettingsDialog


@pytest.fixture
def no_collector() -> Iterator[None]:
    """Only reference counting frees anything during the test."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize(
    "make",
    [
        lambda: SettingsDialog(None, ConnectionSettings("", ""), "x"),
        lambda: SettingsDialog(None, ConnectionSettings("http://example.com", "t", "ca.pem"), "x"),
        lambda: SettingsDialog(None, ConnectionSettings("", ""), "x", demo_token="t" * 43),
    ],
    ids=["empty", "plain-http-and-ca-bundle", "demo-token"],
)
def test_a_settings_dialog_is_freed_by_reference_counting(
    qapp: object, no_collector: None, make: Callable[[], QDialog]
) -> None:
    dialog = make()
    dialog.show()
    dialog.close()
    alive = weakref.ref(dialog)
    del dialog
    assert alive() is None
