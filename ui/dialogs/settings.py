"""Settings: the server, the token and the CA bundle kept in the profile, how a second device
joins the demo server, whether Enter sends, the appearance (`ui.dialogs.appearance_rows`) and
the language (`ui.dialogs.language_row`).

`ConnectionSettings` is what it edits (an empty server means the built-in demo server; an
empty CA bundle, the system's trusted certificates only). `ui.dialogs.dialogs.Prompts.settings`
shows it without a nested event loop; the rows about trust (`ui.dialogs.trust_rows`) and the demo
token (`ui.dialogs.demo_token`) are their own modules. No Python reference may lead back to the
dialog from its rows (`tests/ui/test_dialog_lifetimes.py`): it must die by reference
counting, on the GUI thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from ui.dialogs.appearance_rows import AppearanceRows
from ui.dialogs.demo_token import DemoTokenField
from ui.dialogs.language_row import LanguageRow
from ui.dialogs.trust_rows import TrustRows
from ui.text.plain import isolate
from ui.theme.theme import current_appearance


@dataclass(frozen=True)
class ConnectionSettings:
    """What the settings dialog edits: empty server means the bundled demo server; empty
    CA bundle means the system's trusted certificates only."""

    server: str
    token: str
    ca_bundle: str = ""


def connection_in_use(url: str, who: str, profile: str, *, bundled: bool) -> str:
    """The dialog's "In use" line, in the user's language: server, account and profile (the
    address and the folder isolated, so a right-to-left sentence keeps their own order)."""
    url, profile = isolate(url), isolate(profile)
    if bundled:
        line = QCoreApplication.translate(
            "SettingsDialog", "{0} as {1} (the built-in demo server)"
        ).format(url, who)
    else:
        line = QCoreApplication.translate("SettingsDialog", "{0} as {1}").format(url, who)
    return line + "\n" + QCoreApplication.translate("SettingsDialog", "profile {0}").format(profile)


def override_words(source: str) -> str:
    """Why the token saved here is not the one in use: `source` names the environment
    variable, or a command-line option (starting with "--"), that gave it ("": none)."""
    if not source:
        return ""
    if source.startswith("--"):
        return QCoreApplication.translate(
            "SettingsDialog",
            "The token in use was given on the command line ({0}); it overrides the token "
            "saved here until Converge is started without it.",
        ).format(source)
    return QCoreApplication.translate(
        "SettingsDialog",
        "The token in use comes from the environment variable {0}; it overrides the token "
        "saved here. Unset {0} for the saved token to be used.",
    ).format(source)


class SettingsDialog(QDialog):
    """Server URL and token, kept per profile."""

    def __init__(
        self,
        parent: QWidget | None,
        current: ConnectionSettings,
        in_use: str = "",
        *,
        enter_sends: bool = True,
        token_storage: str = "",
        demo_token: str = "",
        language: str = "",
        token_override: str = "",
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Settings"))  # connection, sending, appearance, language
        self.setObjectName("settingsDialog")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.server = QLineEdit(current.server)
        self.server.setPlaceholderText(self.tr("Empty: use the built-in demo server"))
        self.server.setAccessibleName(self.tr("Server URL"))
        self.server.setMinimumWidth(340)
        self.token = QLineEdit(current.token)
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.token.setPlaceholderText(self.tr("Bearer token, e.g. dev-alice"))
        self.token.setAccessibleName(self.tr("Token"))
        form = QFormLayout()
        self.in_use = QLabel(in_use or self.tr("Not connected"))
        self.in_use.setObjectName("serverInUse")
        self.in_use.setTextFormat(Qt.TextFormat.PlainText)
        # A long address or profile folder wraps: unwrapped, it widened the dialog past the
        # screen and the form cut its labels ("Jetzt verwendet:").
        self.in_use.setWordWrap(True)
        self.in_use.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.in_use.setAccessibleName(self.tr("Server in use"))
        form.addRow(self.tr("In use now:"), self.in_use)
        self.demo_token: DemoTokenField | None = None
        if demo_token:  # the built-in demo server is in use: how a second device joins it
            self.demo_token = DemoTokenField(demo_token)
            form.addRow(self.tr("Demo token:"), self.demo_token)
            join = QLabel(
                self.tr(
                    "A second device joins the demo server with the address above and this "
                    "token, also kept in this profile's file bundled-server/token."
                )
            )
            join.setWordWrap(True)
            join.setEnabled(False)
            form.addRow("", join)
        form.addRow(self.tr("&Server URL:"), self.server)
        form.addRow(self.tr("&Token:"), self.token)
        # A token given at start (the environment, the command line) wins over the saved
        # one: without this line a token fixed here would seem to be ignored.
        self.token_override = QLabel(override_words(token_override))
        self.token_override.setObjectName("tokenOverride")
        self.token_override.setTextFormat(Qt.TextFormat.PlainText)
        self.token_override.setWordWrap(True)
        self.token_override.setAccessibleName(self.tr("Token in use"))
        self.token_override.setVisible(bool(token_override))
        form.addRow("", self.token_override)
        self.trust = TrustRows(self, form, self.server, current.ca_bundle, token_storage)
        self.enter_sends = QCheckBox(self.tr("&Enter sends a message (Shift+Enter: new line)"))
        self.enter_sends.setChecked(enter_sends)
        self.enter_sends.setAccessibleName(self.tr("Enter sends a message"))
        form.addRow("", self.enter_sends)
        self.appearance = AppearanceRows(form, current_appearance())  # theme, font size
        self.language = LanguageRow(form, language, self)
        note = QLabel(self.tr("Saved in this profile. Saving reconnects with these settings."))
        note.setWordWrap(True)
        note.setEnabled(False)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(buttons)

    def values(self) -> ConnectionSettings:
        return ConnectionSettings(
            self.server.text().strip(), self.token.text().strip(), self.trust.ca_bundle_path()
        )
