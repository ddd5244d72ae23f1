"""The sidebar's scroll position survives updates: the row at the top stays at the top.

Rows inserted or moved above the viewport would otherwise push what the user is reading
down (or pull it up). Before the model applies a change (`about_to_apply`) the anchor notes
which conversation is at the top of the viewport and at which row; after it (`updated`) it
scrolls by as many rows as that conversation moved. At the very top nothing is kept: new
conversations should come into view there.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QPoint, QTimer
from PySide6.QtWidgets import QListView

from ui.sidebar.model import SessionListModel


class ScrollAnchor(QObject):
    """Keeps `view`'s top row in place across `model`'s updates (owned by the view)."""

    def __init__(self, view: QListView, model: SessionListModel) -> None:
        super().__init__(view)
        self._view = view
        self._model = model
        self._anchor: tuple[str, int] | None = None
        model.about_to_apply.connect(self.remember)
        model.updated.connect(self.restore)

    def remember(self) -> None:
        """Before an update: which row is at the top of the viewport (unless at the very
        top, where new conversations should come into view)."""
        self._anchor = None
        if self._view.verticalScrollBar().value() == 0:
            return
        top = self._view.indexAt(QPoint(1, 1))
        session_id = top.data(SessionListModel.IdRole) if top.isValid() else None
        if isinstance(session_id, str):
            self._anchor = (session_id, top.row())

    def restore(self) -> None:
        """After an update: keep that row where it was, although rows moved above it."""
        anchor, self._anchor = self._anchor, None
        if anchor is None:
            return
        index = self._model.index_of(anchor[0])
        if not index.isValid() or index.row() == anchor[1]:
            return
        bar = self._view.verticalScrollBar()
        height = self._view.sizeHintForRow(0)  # uniform rows
        target = bar.value() + (index.row() - anchor[1]) * height
        bar.setValue(target)
        if bar.value() != target:  # the batched layout has not grown the range yet
            QTimer.singleShot(50, lambda: bar.setValue(target))
