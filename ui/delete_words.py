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
