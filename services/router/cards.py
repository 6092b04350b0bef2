"""Topic cards: one per work session, what a later request is matched against."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

# The card fields that are embedded, each on its own; "card" is all of them together.
FIELDS = ("title", "summary", "last_request", "last_outcome", "entities")
WHOLE = "card"
# Only cards touched this recently are candidates.
ACTIVE_FOR = timedelta(days=7)


@dataclass(frozen=True)
class Card:
    topic: str
    title: str
    summary: str
    entities: tuple[str, ...]
    last_request: str
    last_outcome: str
    last_active: datetime

    def field(self, name: str) -> str:
        if name == "entities":
            return ", ".join(self.entities)
        return str(getattr(self, name))

    def words(self) -> str:
        """Every field, as one text for lexical matching."""
        return " ".join(self.field(name) for name in FIELDS)

    def description(self, now: datetime) -> str:
        """What the pick reads about the card."""
        parts = [f"{self.title}.", self.summary]
        if self.entities:
            parts.append(f"Involves: {', '.join(self.entities)}.")
        parts.append(f"Last request: {self.last_request}")
        parts.append(f"Last outcome: {self.last_outcome}")
        parts.append(f"Last active {_ago(now - self.last_active)} ago.")
        return " ".join(part for part in parts if part.strip())


def _ago(delta: timedelta) -> str:
    minutes = max(int(delta.total_seconds() // 60), 0)
    if minutes < 60:
        return f"{minutes} min"
    if minutes < 48 * 60:
        return f"{minutes // 60} h"
    return f"{minutes // (24 * 60)} days"
