"""What one delete came to: a status and a user-ready sentence, a plain value.

Apart from `sync.delete.service` (which needs the HTTP client) so that the window's delete
flow imports it before httpx is loaded (the first paint; docs/performance.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from sync.errors import SyncError


class DeleteStatus(Enum):
    DELETED = "deleted"  # 204: removed from server and mirror
    ALREADY_GONE = "already_gone"  # the contract's 404: absence confirmed; removed from mirror
    ACTIVE_RUN = "active_run"  # 409: nothing deleted; row kept; stop the run first
    FAILED = "failed"  # refused or never sent (401, 403, 500, 503, no connection): row kept
    UNCONFIRMED = "unconfirmed"  # sent, answer lost (network, 502/504): row kept and marked
    SERVER_ONLY = "server_only"  # 204/404, but the mirror could not be written: row kept


@dataclass(frozen=True)
class DeleteOutcome:
    """One session's result; `removed` tells whether the row left the mirror."""

    session_id: str
    status: DeleteStatus
    message: str
    active_run_id: str | None = None
    error: SyncError | None = field(default=None, compare=False)
    seq: int = 0  # the change sequence of the local removal (0: no row was removed)

    @property
    def removed(self) -> bool:
        return self.status in (DeleteStatus.DELETED, DeleteStatus.ALREADY_GONE)
