"""Files of the window: opening and saving a conversation's file (an artifact card's Open
and Save…), and exporting a conversation as Markdown or JSON with its files.

Both are started by the window, not by the conversation: they write to disk, never into
the transcript, so opening another conversation does not cancel them. Both are window
actions (`ui.window.action`): a file that could not be fetched says why in the pane, and
"Open" on a file that no application on this device opens says so and offers Save…
(`QDesktopServices.openUrl` answers False; before, nothing happened at all).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QStandardPaths, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog

from sync import copy_private, export_conversation, safe_file_name
from ui.dialogs.dialogs import run_dialog
from ui.sidebar.model import display_title
from ui.text.plain import isolate
from ui.window.action import ActionRunner, WindowAction
from ui.window.failure_words import Cause, Failure, Fix

if TYPE_CHECKING:
    from sync import SyncEngine
    from ui.window.main_window import MainWindow

MARKDOWN_FILTER = "Markdown with files (*.md)"
JSON_FILTER = "JSON with files (*.json)"
NO_APPLICATION = "No application on this device opens “{0}”. Save it, then open it yourself."


def documents_folder() -> str:
    """Where Save and Export ask first: the user's Documents (the desktop's own), never the
    folder Converge happened to be started from; the home folder where there is none."""
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    return documents if documents and Path(documents).is_dir() else str(Path.home())


class FileActions:
    """Open and Save… for the window's artifact cards."""

    #: The operating system's "open this file" (a seam: tests answer False, as a desktop
    #: with no application for the type does).
    open_url: Callable[[QUrl], bool] = staticmethod(QDesktopServices.openUrl)

    def __init__(
        self,
        window: MainWindow,
        actions: ActionRunner,
        engine: Callable[[], SyncEngine],
        spawn: Callable[..., object],
    ) -> None:
        self.window = window
        self._actions = actions
        self._engine = engine
        self._spawn = spawn

    async def open(self, artifact_id: str, name: str) -> None:
        """Fetch the file (from the cache when it is there) and hand it to the desktop."""
        engine = self._engine()
        session_id = self.window.pane.session_id

        def save() -> None:
            self._spawn(self.save(artifact_id, name), f"save {name}")

        def opened(path: Path) -> None:
            if type(self).open_url(QUrl.fromLocalFile(str(path))):
                return
            if self.window.pane.session_id != session_id:
                return
            failure = Failure(
                Cause.LOCAL,
                NO_APPLICATION.format(isolate(safe_file_name(name))),
                (Fix.SAVE,),
                "The desktop reported that no application is set to open this type of file.",
            )
            self.window.pane.show_failure(failure, {Fix.SAVE: save})

        await self._actions.run(
            WindowAction(
                f"open {isolate(safe_file_name(name))}",
                lambda: engine.artifact_file(artifact_id),
                success=opened,
                retry=lambda: self._spawn(self.open(artifact_id, name), f"open {name}"),
                in_pane=lambda: self.window.pane.session_id == session_id,
            )
        )

    async def save(self, artifact_id: str, name: str) -> None:
        """Ask where, then write a 0600 copy of the file the user chose there. The dialog is
        pre-filled with the name made safe (a name from content is never a path: one Enter
        on `../../.config/autostart/x.desktop` must not save outside the folder shown); the
        folder the user picks is theirs to pick, and the write lands exactly on the file
        chosen, never through a symlink planted at its name."""
        engine = self._engine()
        session_id = self.window.pane.session_id
        suggested = safe_file_name(name)
        dialog = QFileDialog(self.window, f"Save {isolate(suggested)}")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDirectory(documents_folder())
        dialog.selectFile(suggested)
        if await run_dialog(dialog) != QFileDialog.DialogCode.Accepted:
            return
        target = Path(dialog.selectedFiles()[0])

        async def write() -> Path:
            source = await engine.artifact_file(artifact_id)
            return await asyncio.to_thread(copy_private, source, target.parent, target.name)

        await self._actions.run(
            WindowAction(
                f"save {isolate(suggested)}",
                write,
                success=lambda written: self.window.set_status(f"Saved {isolate(written.name)}"),
                in_pane=lambda: self.window.pane.session_id == session_id,
            )
        )

    async def export(self, session_id: str) -> None:
        """Ask where, then save the conversation as Markdown or JSON with its files."""
        self._engine()
        row = self.window.model.find(session_id)
        name = safe_file_name(display_title(row) if row else session_id, "conversation")
        dialog = QFileDialog(self.window, "Export conversation")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilters([MARKDOWN_FILTER, JSON_FILTER])
        dialog.setDefaultSuffix("md")
        dialog.filterSelected.connect(
            lambda chosen: dialog.setDefaultSuffix("json" if chosen == JSON_FILTER else "md")
        )
        dialog.setDirectory(documents_folder())
        dialog.selectFile(f"{name}.md")
        if await run_dialog(dialog) != QFileDialog.DialogCode.Accepted:
            return
        target = Path(dialog.selectedFiles()[0])
        fmt = "json" if dialog.selectedNameFilter() == JSON_FILTER else "markdown"
        await self.export_to(session_id, target, fmt)

    async def export_to(self, session_id: str, target: Path, fmt: str) -> Path:
        """Export without asking (the dialog's second half; scripts and tests)."""
        engine = self._engine()
        self.window.set_status(f"Exporting to {target.name}…")
        written = await export_conversation(engine, session_id, target, fmt)
        caveats = written.caveats()
        self.window.set_status(f"Exported to {written.path}" + (f" ({caveats})" if caveats else ""))
        return written.path
