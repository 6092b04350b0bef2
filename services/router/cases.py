"""Routing cases in the JSONL format of CONTRACTS section 6, for training and evaluation."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from router.cards import Card
from violet.models import JsonObject

NEW = "new"


@dataclass(frozen=True)
class Case:
    case_id: str
    person: str
    now: datetime
    request: str
    cards: list[Card]
    # A card's topic, or NEW.
    gold: str


def fingerprint(case: Case) -> str:
    """A short hash of who asked what when: the same case in any file has the same one."""
    said = "\x1f".join((case.person, case.request, case.now.isoformat()))
    return hashlib.sha256(said.encode()).hexdigest()[:16]


def parse_time(text: str) -> datetime:
    at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return at.astimezone(UTC) if at.tzinfo else at.replace(tzinfo=UTC)


def card_from_json(data: JsonObject) -> Card:
    return Card(
        topic=data["id"],
        title=data.get("title", ""),
        summary=data.get("summary", ""),
        entities=tuple(data.get("entities") or ()),
        last_request=data.get("last_request", ""),
        last_outcome=data.get("last_outcome", ""),
        last_active=parse_time(data["last_active"]),
    )


def load_cases(path: str | Path) -> list[Case]:
    cases = []
    for line in Path(path).read_text().splitlines():
        if not line.strip():
            continue
        data = json.loads(line)
        cases.append(
            Case(
                case_id=data["case_id"],
                person=data["person_id"],
                now=parse_time(data["now"]),
                request=data["request"],
                cards=[card_from_json(card) for card in data["cards"]],
                gold=data["gold"],
            )
        )
    return cases
