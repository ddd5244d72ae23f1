"""'Couldn't <do this>' in the user's language, for a failed window action.

`WindowAction.what` is an English key ("send the message", "open notes.txt") the code
also matches on (which failure a later success clears); the sentence shown is looked up
here: the fixed ones as they are, a file's ("open <name>", "save <name>") with the name
put back in. An action without a translation keeps its English.
"""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

_FIXED = {
    "open the conversation": QT_TRANSLATE_NOOP("WindowAction", "Couldn't open the conversation"),
    "follow the live reply (it continues on the server)": QT_TRANSLATE_NOOP(
        "WindowAction", "Couldn't follow the live reply (it continues on the server)"
    ),
    "send the message": QT_TRANSLATE_NOOP("WindowAction", "Couldn't send the message"),
    "stop the reply": QT_TRANSLATE_NOOP("WindowAction", "Couldn't stop the reply"),
    "send the decision": QT_TRANSLATE_NOOP("WindowAction", "Couldn't send the decision"),
    "read the memory": QT_TRANSLATE_NOOP("WindowAction", "Couldn't read the memory"),
    "list the conversations": QT_TRANSLATE_NOOP("WindowAction", "Couldn't list the conversations"),
    "delete the conversation": QT_TRANSLATE_NOOP(
        "WindowAction", "Couldn't delete the conversation"
    ),
}
_WITH_NAME = {
    "open": QT_TRANSLATE_NOOP("WindowAction", "Couldn't open {0}"),
    "save": QT_TRANSLATE_NOOP("WindowAction", "Couldn't save {0}"),
}


def couldnt(what: str) -> str:
    """ "Couldn't send the message", translated (no full stop)."""
    fixed = _FIXED.get(what)
    if fixed is not None:
        return QCoreApplication.translate("WindowAction", str(fixed))
    verb, _, name = what.partition(" ")
    pattern = _WITH_NAME.get(verb)
    if pattern is not None and name:
        return QCoreApplication.translate("WindowAction", str(pattern)).format(name)
    return f"Couldn't {what}"
