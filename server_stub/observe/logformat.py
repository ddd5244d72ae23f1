"""`--log-format json`: one JSON object per log line (docs/server.md "Metrics and logs").

Fields: `time` (the contract's UTC form, six fractional digits), `level`, `logger`,
`message`, `request_id` (while a request is served, `observe.REQUEST_ID`), and on access
lines `method`, `route` (the template, never the raw path), `status`, `duration_ms`. An
exception adds `exception`, its class name only: a traceback's text can quote a database
statement's parameters (titles, messages) or a store's paths, and logs carry no content.
`ensure_ascii` keeps every line one line of ASCII, whatever a message holds.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from server_stub.observe.requests import REQUEST_ID

_ACCESS_FIELDS = ("method", "route", "status", "duration_ms")


class JsonFormatter(logging.Formatter):
    """A `logging.Formatter` writing one JSON object per record."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created, UTC)
        line: dict[str, Any] = {
            "time": when.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = REQUEST_ID.get()
        if request_id:
            line["request_id"] = request_id
        for name in _ACCESS_FIELDS:
            value = record.__dict__.get(name)
            if value is not None:
                line[name] = round(value, 3) if isinstance(value, float) else value
        if record.exc_info and record.exc_info[0] is not None:
            line["exception"] = record.exc_info[0].__qualname__
        return json.dumps(line, ensure_ascii=True, separators=(",", ":"))


def install(level: str, log_format: str) -> None:
    """Configure the root logger for `converge-server` (stderr; human or JSON lines)."""
    if log_format == "json":
        handler = logging.StreamHandler()
        handler.setFormatter(JsonFormatter())
        logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
    else:
        logging.basicConfig(
            level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
