"""Log lines: JSON for machines, short text for a person at a terminal."""

from __future__ import annotations

import json
import logging

from violet.logs import JsonFormatter, TextFormatter


def record(message: str, level: int = logging.INFO, **extra: object) -> logging.LogRecord:
    made = logging.LogRecord("uvicorn.error", level, __file__, 1, message, None, None)
    made.__dict__.update(extra)
    return made


def test_json_lines_carry_extras_but_no_terminal_colours() -> None:
    line = JsonFormatter("gateway").format(
        record("Started", address="127.0.0.1:1", color_message="\x1b[36mStarted\x1b[0m")
    )
    entry = json.loads(line)
    assert entry["service"] == "gateway" and entry["address"] == "127.0.0.1:1"
    assert "color_message" not in entry and "\x1b" not in line


def test_text_lines_are_short_and_name_the_level_only_when_it_matters() -> None:
    info = TextFormatter("router").format(record("serving", address="127.0.0.1:50052"))
    warning = TextFormatter("router").format(record("slow", logging.WARNING))
    assert info.endswith("router   serving address=127.0.0.1:50052")
    assert "INFO" not in info and "WARNING slow" in warning
    assert not info.lstrip().startswith("{")
