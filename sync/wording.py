"""User-facing wording shared by the window and the command line, in one place.

The delete confirmation is required by ADR-0050 ("the confirmation copy must say that the
server and synchronized clients lose the conversation and associated data") and CONTRACT §7.
"""

from __future__ import annotations

DELETE_CONFIRM_TITLE = "Delete conversation?"


def delete_consequences(count: int = 1) -> str:
    """What a delete removes, and where: the window's dialog and the CLI say the same words."""
    if count == 1:
        what = (
            "The conversation and its associated data (its messages and files, "
            "and the memories and knowledge derived from it)"
        )
    else:
        what = (
            "These conversations and their associated data (their messages and files, "
            "and the memories and knowledge derived from them)"
        )
    # CONTRACT §7 and ADR-0050: the copy names the server and every synchronized client.
    return (
        f"{what} will be removed from the server and from every synchronized client. "
        "This cannot be undone."
    )


def delete_question(title: str | None, count: int = 1) -> str:
    """The one-line question that heads the confirmation."""
    if count > 1:
        return f"Delete {count} conversations?"
    return f"Delete “{title}”?" if title else "Delete this untitled conversation?"


def delete_confirmation(title: str | None, count: int = 1) -> str:
    """The whole confirmation shown before a delete (Cancel/No is the default)."""
    return f"{delete_question(title, count)}\n{delete_consequences(count)}"


DELETE_PROMPT = "Delete? [y/N] "
DELETE_EVERYWHERE_BUTTON = "Delete Everywhere"
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


def delete_not_confirmed(reason: str) -> str:
    """Shown when a delete was sent but its answer never came (CONTRACT §9.2): the server
    may or may not have deleted it, and saying "nothing was deleted" would be a guess."""
    return (
        f"The delete was not confirmed: {reason} The server may or may not have deleted the "
        "conversation. It is kept here, marked, until a retry or the next sync settles it; "
        "deleting again is safe."
    )


def deleted_on_server_only(reason: str) -> str:
    """Shown when the server confirmed the delete but this device's history could not be
    written: the important fact (the server delete happened) comes first."""
    return (
        "The conversation was deleted from the server, but this device's history could not "
        f"be updated ({reason.rstrip('.')}). It will disappear here at the next sync."
    )


def unconfirmed(count: int, reason: str, *, token_refused: bool = False) -> str:
    """Shown when a pass could not ask the server about rows its walk no longer listed
    (CONTRACT §7 keeps them: only a 404 prunes). The window's status line and
    `converge sync` both say it; `reason` is the error's own sentence."""
    rows, kept = (
        ("1 conversation", "it was") if count == 1 else (f"{count} conversations", "they were")
    )
    if token_refused:
        return (
            f"The server no longer accepts this token, so {rows} it stopped listing could "
            f"not be checked; {kept} kept. {reason}"
        )
    return (
        f"{rows} the server stopped listing could not be checked ({reason.rstrip('.')}); "
        f"{kept} kept and the next sync retries."
    )


def will_try_again(trouble: str) -> str:
    """A pass that met a 503 (`Unavailable`'s sentence): the window's status line and
    `converge sync` add that the next pass retries, since the trouble is temporary."""
    return f"{trouble.rstrip('.')}; Converge will try again."


def messages_to_fetch(count: int, reason: str | None = None) -> str:
    """Said when a sync ends with the rows converged but transcripts still to fetch (its
    deadline came, or the server stopped answering them): the rest follows in the next
    sync, or in the window, which keeps fetching in the background."""
    whose = "1 conversation's" if count == 1 else f"{count:,} conversations'"
    why = f" ({reason.rstrip('.')})" if reason else ""
    return (
        f"{whose} messages still to fetch{why}; run `converge sync` again or keep the window open."
    )
