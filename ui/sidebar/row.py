"""What the sidebar reads from a row, and the order it shows rows in: shared by the model,
the date sections (`ui.sidebar.grouping`) and the deltas (`ui.sidebar.delta`)."""

from __future__ import annotations

from typing import Protocol

#: Ids of date-section header rows (`ui.sidebar.grouping`) start with this; no session id does.
HEADER_PREFIX = "§section:"


class SidebarRow(Protocol):
    """What the sidebar reads from a mirror row (`sync.mirror.store.SessionView`)."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str | None: ...
    @property
    def created_at(self) -> str: ...
    @property
    def updated_at(self) -> str: ...
    @property
    def active_run_id(self) -> str | None: ...
    @property
    def last_run_id(self) -> str | None: ...


def sort_key(row: SidebarRow) -> tuple[str, str]:
    """A row's key in the mirror's order, which the sidebar shows descending."""
    if row.id.startswith(HEADER_PREFIX):
        return (getattr(row, "before", row.updated_at), "")
    return (row.updated_at, row.id)
