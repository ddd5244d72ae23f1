"""The delete confirmation's words in the user's language.

`sync.wording` holds the English the command line prints (sync/ has no Qt); the window
shows the same sentences through Qt's translator, context "Dialogs". The English here is
`sync.wording`'s, word for word (`tests/ui/test_delete_words.py` keeps them together).
"""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

CONFIRM_TITLE = str(QT_TRANSLATE_NOOP("Dialogs", "Delete conversation?"))
DELETE_EVERYWHERE = str(QT_TRANSLATE_NOOP("Dialogs", "Delete Everywhere"))
CANCEL = str(QT_TRANSLATE_NOOP("Dialogs", "Cancel"))


def consequences(count: int = 1) -> str:
    """What a delete removes, and where."""
    if count == 1:
        what = QCoreApplication.translate(
            "Dialogs",
            "The conversation and its associated data (its messages and files, and the "
            "memories and knowledge derived from it) will be removed from the server and "
            "from every synchronized client. This cannot be undone.",
        )
    else:
        what = QCoreApplication.translate(
            "Dialogs",
            "These conversations and their associated data (their messages and files, and "
            "the memories and knowledge derived from them) will be removed from the server "
            "and from every synchronized client. This cannot be undone.",
        )
    return what


def question(title: str | None, count: int = 1) -> str:
    """The one-line question that heads the confirmation."""
    if count > 1:
        return QCoreApplication.translate("Dialogs", "Delete %n conversations?", None, count)
    if title:
        return QCoreApplication.translate("Dialogs", "Delete “{0}”?").format(title)
    return QCoreApplication.translate("Dialogs", "Delete this untitled conversation?")


# Constants translated where shown (`ui.dialogs.dialogs` passes them through its translator).
RUN_IN_PROGRESS = str(QT_TRANSLATE_NOOP("Dialogs", "Run in progress"))
NOT_CONFIRMED_TITLE = str(QT_TRANSLATE_NOOP("Dialogs", "Delete not confirmed"))
FAILED_TITLE = str(QT_TRANSLATE_NOOP("Dialogs", "Delete failed"))
RUN_IN_PROGRESS_INFO = str(
    QT_TRANSLATE_NOOP(
        "Dialogs",
        "A conversation can't be deleted while a run is in progress in it. Stop Run and "
        "Delete stops the run first; once it has ended, the conversation is deleted "
        "everywhere.",
    )
)
#: The buttons' descriptions for assistive technology, by their English.
DESCRIPTIONS = (
    QT_TRANSLATE_NOOP("Dialogs", "Delete the conversation from the server and every device"),
    QT_TRANSLATE_NOOP("Dialogs", "Keep the conversation"),
    QT_TRANSLATE_NOOP("Dialogs", "Save a copy of the conversation and its files first"),
    QT_TRANSLATE_NOOP(
        "Dialogs", "Stop the run, wait for it to end, then delete the conversation everywhere"
    ),
    QT_TRANSLATE_NOOP("Dialogs", "Keep the conversation and let the run continue"),
    QT_TRANSLATE_NOOP("Dialogs", "Try the delete again"),
)


def running_info() -> str:
    """Under the question when the conversation is running."""
    return QCoreApplication.translate(
        "Dialogs",
        "A reply is running in it now. Stop Run and Delete stops the run first; once it has "
        "ended, the conversation is deleted.",
    )


def still_running(quoted: str) -> str:
    return QCoreApplication.translate(
        "Dialogs", "{0} is still running. Nothing was deleted."
    ).format(quoted)


def kept(detail: str, quoted: str | None, count: int) -> str:
    """After a failed delete: the reason, then that the rows are kept."""
    if quoted is not None:
        words = QCoreApplication.translate("Dialogs", "{0} is kept. Deleting again is safe.")
        return f"{detail} {words.format(quoted)}".strip()
    words = QCoreApplication.translate(
        "Dialogs", "%n conversations are kept. Deleting again is safe.", None, count
    )
    return f"{detail} {words}".strip()


def deleted(title: str) -> str:
    """A single delete's success on the status line (the title isolated by the caller)."""
    return QCoreApplication.translate("Dialogs", "Deleted “{0}” everywhere.").format(title)
