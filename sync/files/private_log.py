"""The client's log file, rotated, each file owner-only (`sync.files.private_files`' rules).

Apart from them because `logging.handlers` loads sockets and pickling: a command that writes
no log (`converge search`) does not pay for it.
"""

from __future__ import annotations

import io
import logging.handlers

from sync.files.private_files import private_opener


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """The client's log file: rotated as usual, each file opened 0600 and never through a
    symlink planted at its name."""

    def _open(self) -> io.TextIOWrapper:
        stream = open(  # noqa: SIM115 - the handler owns and closes the stream
            self.baseFilename,
            self.mode,
            encoding=self.encoding,
            errors=self.errors,
            opener=private_opener,
        )
        assert isinstance(stream, io.TextIOWrapper)  # a text mode: "a" or "w"
        return stream
