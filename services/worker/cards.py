"""The topic card a work session keeps current with the router after each turn: what the work
is about, in a few words a later request can be matched against."""

from __future__ import annotations

import re
from datetime import datetime

from violet.models import JsonObject

SUMMARY_CHARS = 600
TITLE_CHARS = 80
MAX_ENTITIES = 12
_URL = re.compile(r"https?://[^\s<>\"'()\[\]{}]+", re.IGNORECASE)
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_DOCUMENT = re.compile(r"\b[\w-]+\.(?:md|txt|csv)\b", re.IGNORECASE)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*")


def shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


def title_of(request: str) -> str:
    return shorten(request, TITLE_CHARS)


def entities(texts: list[str]) -> list[str]:
    """Links, addresses, document names and capitalised names, in order of first mention."""
    found: list[str] = []
    for text in texts:
        for pattern in (_URL, _EMAIL, _DOCUMENT, _NAME):
            for match in pattern.findall(text):
                value = match.rstrip(".,;:!?")
                if value and value.lower() not in (f.lower() for f in found):
                    found.append(value)
    return found[:MAX_ENTITIES]


def card(
    topic: str,
    title: str,
    history: list[tuple[str, str]],
    last_request: str,
    last_outcome: str,
    at: datetime,
) -> JsonObject:
    """The card as the outbox stores it; `history` is (request, outcome), oldest first."""
    recent = [*history[-3:], (last_request, last_outcome)]
    lines = [f"{shorten(asked, 120)}: {shorten(told, 160)}" for asked, told in recent]
    return {
        "topic": topic,
        "title": title,
        "summary": shorten(" | ".join(lines), SUMMARY_CHARS),
        "entities": entities([asked for asked, _ in history] + [last_request, last_outcome]),
        "last_request": last_request,
        "last_outcome": last_outcome,
        "last_active": at.isoformat(),
    }
