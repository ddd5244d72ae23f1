"""The Settings rows about trust (CONTRACT §10.1): where the token is kept, the CA bundle,
and a warning while the server is plain http:// to another machine.

Kept apart from `ui.dialogs.settings.SettingsDialog`, which only places them under its token row:
what the user trusts is said where it is set, and the words come from `sync` (the dialog
knows no keychain and no TLS).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QObject, Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from sync import TokenLocation, plain_http_warning


class TrustRows(QObject):
    """`token_storage` (a sentence from `sync.profile.token_store.TokenLocation.describe`), the CA
    bundle field with its Browse… button, and `insecure`, shown while `server` needs it."""

    def __init__(
        self,
        parent: QWidget,
        form: QFormLayout,
        server: QLineEdit,
        ca_bundle: str,
        token_storage: str,
    ) -> None:
        super().__init__(parent)  # Qt owns it; no Python reference back to the dialog
        self.token_storage = QLabel(token_storage or self.tr("Not saved yet."))
        self.token_storage.setObjectName("tokenStorage")
        self.token_storage.setTextFormat(Qt.TextFormat.PlainText)
        self.token_storage.setWordWrap(True)
        self.token_storage.setEnabled(False)
        self.token_storage.setAccessibleName(self.tr("Where the token is kept"))
        form.addRow("", self.token_storage)
        self.ca_bundle = QLineEdit(ca_bundle)
        self.ca_bundle.setObjectName("caBundle")
        self.ca_bundle.setPlaceholderText(self.tr("Empty: system certificates only"))
        self.ca_bundle.setAccessibleName(self.tr("CA bundle file"))
        browse = QPushButton(self.tr("&Browse…"))
        browse.setObjectName("caBundleBrowse")
        browse.clicked.connect(self._choose_ca_bundle)
        row = QHBoxLayout()
        row.addWidget(self.ca_bundle, 1)
        row.addWidget(browse)
        label = QLabel(self.tr("&CA bundle:"))
        label.setBuddy(self.ca_bundle)  # a row of two widgets gets no buddy by itself
        form.addRow(label, row)
        self.insecure = QLabel()
        self.insecure.setObjectName("insecureWarning")
        self.insecure.setTextFormat(Qt.TextFormat.PlainText)
        self.insecure.setWordWrap(True)
        self.insecure.setAccessibleName(self.tr("Connection not encrypted"))
        form.addRow("", self.insecure)
        self._form = form
        server.textChanged.connect(self._update_insecure)
        self._update_insecure(server.text())

    def ca_bundle_path(self) -> str:
        return self.ca_bundle.text().strip()

    def _update_insecure(self, server: str) -> None:
        warning = plain_http_warning(server)
        self.insecure.setText(warning or "")
        self._form.setRowVisible(self.insecure, bool(warning))  # no empty gap when hidden

    def _choose_ca_bundle(self) -> None:
        # Not QFileDialog.getOpenFileName: a nested event loop under qasync (PITFALLS §4).
        owner = self.parent()
        chooser = QFileDialog(
            owner if isinstance(owner, QWidget) else None, self.tr("Choose a CA bundle (PEM)")
        )
        chooser.setFileMode(QFileDialog.FileMode.ExistingFile)
        chooser.setNameFilters([self.tr("Certificates (*.pem *.crt *.cer)"), self.tr("All (*)")])
        chooser.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        chooser.fileSelected.connect(self.ca_bundle.setText)
        chooser.open()


def token_storage_words(location: TokenLocation | None) -> str:
    """Where the saved token is kept, in the user's language (`TokenLocation.describe` is
    the English of the command line)."""
    if location is None:
        return ""
    if location.store == "keychain":
        return QCoreApplication.translate("TrustRows", "Stored in the system keychain.")
    return QCoreApplication.translate(
        "TrustRows", "Stored in a file readable only by you: {0}"
    ).format(location.path)
