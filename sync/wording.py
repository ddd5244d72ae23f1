"""User-facing wording shared by the window and the command line, in one place.

The delete confirmation is required by ADR-0050 ("the confirmation copy must say that the
server and synchronized clients lose the conversation and associated data") and CONTRACT §7.
"""

from __future__ import annotations

DELETE_CONFIRM_TITLE = "Delete conversation?"


def delete_confirmation(title: str | None, count: int = 1) -> str:
    """The body of the confirmation shown before a delete (Cancel/No is the default)."""
    if count > 1:
        what = f"These {count} conversations and their associated data"
    elif title:
        what = f"The conversation “{title}” and its associated data"
    else:
        what = "This conversation and its associated data"
    return (
        f"{what} (messages, runs, artifacts and memories formed in it) will be removed "
        "from the server and from every synchronized client. This cannot be undone."
    )


DELETE_PROMPT = "Delete? [y/N] "
DELETE_BUTTON = "Delete everywhere"
CANCEL_BUTTON = "Cancel"


def run_in_progress(active_run_id: str | None) -> str:
    """Shown on 409: the delete did nothing; stopping the run is a separate action."""
    run = f" ({active_run_id})" if active_run_id else ""
    return (
        f"A run{run} is still in progress in this conversation, so nothing was deleted. "
        "Stop the run first, then delete."
    )


def nothing_deleted(reason: str) -> str:
    """Shown when the server did not confirm a delete (network error, 5xx, 401, 403)."""
    return (
        f"Nothing was deleted: {reason} The conversation is kept. "
        "You can retry; deleting is safe to repeat."
    )


STOP_AND_DELETE_BUTTON = "Stop run, then delete"
