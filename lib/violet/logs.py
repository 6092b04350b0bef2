"""Logs, one record a line, carrying the trace and span ids when there are any.

JSON for machines (a log collector, a file, a pipe); short readable lines when a person watches
a terminal. `VIOLET_LOG_FORMAT` chooses: `auto` (the default: text on a terminal), `text`, `json`.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

from violet.telemetry import current_span_ids

_RESERVED = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message"}
# Extras some libraries add for their own terminal output (uvicorn's coloured message).
_DROPPED = frozenset({"color_message"})
# Chatty at INFO and of no use to a person watching: every health probe, every migration step.
_QUIET_ON_A_TERMINAL = ("uvicorn.access", "alembic.runtime.migration")
# Name at INFO what a person asked for (the address of every page fetched): kept to warnings.
_QUIET_EVERYWHERE = ("httpx", "httpcore")


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    """The record's own extras, and its trace when it was logged inside a span."""
    extra = {
        key: value
        for key, value in record.__dict__.items()
        if key not in _RESERVED and key not in _DROPPED
    }
    ids = current_span_ids()
    if ids:
        extra["trace_id"], extra["span_id"] = ids
    return extra


class JsonFormatter(logging.Formatter):
    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "at": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "service": self.service,
            "logger": record.name,
            "message": record.getMessage(),
            **_fields(record),
        }
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class TextFormatter(logging.Formatter):
    """`22:06:02 router   serving address=127.0.0.1:50052`; the level only when it matters."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        at = datetime.fromtimestamp(record.created).strftime("%H:%M:%S")
        level = f"{record.levelname} " if record.levelno >= logging.WARNING else ""
        extra = _fields(record)
        extra.pop("span_id", None)
        details = " ".join(f"{key}={value}" for key, value in extra.items())
        line = f"{at} {self.service:<8} {level}{record.getMessage()} {details}".rstrip()
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def setup_logging(service: str, level: str, format: str = "auto") -> None:
    as_text = format == "text" or (format == "auto" and sys.stderr.isatty())
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(TextFormatter(service) if as_text else JsonFormatter(service))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    if as_text and logging.getLevelName(level) <= logging.INFO:
        for chatty in _QUIET_ON_A_TERMINAL:
            logging.getLogger(chatty).setLevel(logging.WARNING)
    for telling in _QUIET_EVERYWHERE:
        logging.getLogger(telling).setLevel(max(logging.WARNING, root.level))
