"""Apply a mirror write's delta (`sync.IndexChanged`) to the sidebar model, row by row.

A change of one row costs a few bisections of the sort key (`updated_at` DESC, `id` DESC)
and one Qt row signal, instead of a full read of the mirror and a diff of every row.
The rows shown follow `Mirror.rows(filter_text)`: a row that does not match the filter
(`sync.matches_filter`, the same predicate in Python) is treated as absent. With date
sections (`ui.sidebar.grouping`), a section's header comes with its first row and goes with its
last; a row whose update crosses sections moves (`beginMoveRows`), so selection, current
row and scroll follow it. Applying a row that is already shown, or removing one that is
not, changes nothing: a delta the last full read already contained is harmless.

`NeedsResync` asks the caller for a full read (a model out of the mirror's order): the
full diff path is always the fallback.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sync import matches_filter
from ui.sidebar.grouping import section_of
from ui.sidebar.model import SessionListModel
from ui.sidebar.row import HEADER_PREFIX, SidebarRow

__all__ = ["NeedsResync", "apply_delta"]


class NeedsResync(Exception):
    """The delta cannot be applied in place; re-read the mirror and diff."""


def apply_delta(
    model: SessionListModel,
    rows: Sequence[SidebarRow],
    removed: Sequence[str],
    *,
    filter_text: str = "",
    grouped_at: datetime | None = None,
) -> None:
    """Bring the model from the mirror before a write to the mirror after it.

    `rows`: the values the write inserted or updated; `removed`: the ids it removed;
    `grouped_at`: the `now` the shown date sections were built with (None: no sections).
    """
    if not rows and not removed:
        return
    model.begin_delta()
    try:
        for row_id in removed:
            _remove(model, row_id, grouped_at)
        for row in rows:
            if matches_filter(row.id, row.title, filter_text):
                _upsert(model, row, grouped_at)
            else:
                _remove(model, row.id, grouped_at)
    except LookupError as exc:
        raise NeedsResync(str(exc)) from exc
    finally:
        model.end_delta()


def _upsert(model: SessionListModel, row: SidebarRow, grouped_at: datetime | None) -> None:
    old = model.value(row.id)
    if grouped_at is not None:
        header = section_of(row.updated_at, grouped_at)
        if model.value(header.id) is None:
            model.insert_row(model.bisect(header), header)
    if old is None:
        model.insert_row(model.bisect(row), row)
        return
    source = model.locate(old)
    dest = model.bisect(row)  # counted with the old row still in place
    if dest in (source, source + 1):
        model.change_row(source, row)
    else:
        model.move_row(source, dest, row)
    if grouped_at is not None and old.updated_at != row.updated_at:
        _drop_header_if_empty(model, section_of(old.updated_at, grouped_at))


def _remove(model: SessionListModel, row_id: str, grouped_at: datetime | None) -> None:
    old = model.value(row_id)
    if old is None or row_id.startswith(HEADER_PREFIX):
        return
    model.remove_row(model.locate(old))
    if grouped_at is not None:
        _drop_header_if_empty(model, section_of(old.updated_at, grouped_at))


def _drop_header_if_empty(model: SessionListModel, header: SidebarRow) -> None:
    shown = model.value(header.id)
    if shown is None:
        return
    at = model.locate(shown)
    after = model.row_value_at(at + 1)
    if after is None or after.id.startswith(HEADER_PREFIX):
        model.remove_row(at)
