"""Short words for "which account, on which server": the title bar, the status bar, Settings.

The API has no "who am I" route, so the account is named from the token the profile uses:
the development tokens (`dev-alice`, CONTRACT §1) are names, not secrets, and are shown as
the principal they stand for; any other token is a secret, so only its last four characters
are shown, enough to tell two accounts apart.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from PySide6.QtCore import QCoreApplication

DEV_PREFIX = "dev-"


def account_label(token: str | None) -> str:
    """`dev-alice` -> "alice"; a real token -> "token …a1b2"; none -> "no account"."""
    if not token:
        return "no account"
    if token.startswith(DEV_PREFIX) and len(token) > len(DEV_PREFIX):
        return token[len(DEV_PREFIX) :]
    return f"token …{token[-4:]}"


def server_label(url: str, *, bundled: bool = False) -> str:
    """`http://127.0.0.1:8799` -> "127.0.0.1:8799", with "(built-in demo server)" after
    the bundled one, in the user's language."""
    parts = urlsplit(url)
    host = parts.netloc or url
    if not bundled:
        return host
    return QCoreApplication.translate("MainWindow", "{0} (built-in demo server)").format(host)
