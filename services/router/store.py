"""SQL storage of topic cards and routing decisions; every query is scoped to one person."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from router.cards import Card
from router.tables import cards, decisions
from violet import database
from violet.clock import utc_now


@dataclass(frozen=True)
class Decision:
    person: str
    request: str
    candidates: list[str]
    scores: list[float]
    pick: str
    topic: str
    confidence: float
    reason: str
    opening: float
    at: datetime


class CardStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._sessions = database.sessionmaker(engine)

    async def put(self, person: str, card: Card) -> None:
        values = {
            "title": card.title,
            "summary": card.summary,
            "entities": list(card.entities),
            "last_request": card.last_request,
            "last_outcome": card.last_outcome,
            "last_active": card.last_active,
            "updated_at": utc_now(),
        }
        where = (cards.c.person == person) & (cards.c.topic == card.topic)
        try:
            async with self._sessions() as db, db.begin():
                changed = await db.execute(update(cards).where(where).values(**values))
                if changed.rowcount == 0:
                    await db.execute(
                        insert(cards).values(person=person, topic=card.topic, **values)
                    )
        except IntegrityError:  # another replica created the card meanwhile
            async with self._sessions() as db, db.begin():
                await db.execute(update(cards).where(where).values(**values))

    async def active(self, person: str, since: datetime) -> list[Card]:
        """The person's cards active at or after `since`, most recent first."""
        query = (
            select(cards)
            .where(cards.c.person == person, cards.c.last_active >= since)
            .order_by(cards.c.last_active.desc())
        )
        async with self._sessions() as db:
            rows = (await db.execute(query)).all()
        return [
            Card(
                topic=row.topic,
                title=row.title,
                summary=row.summary,
                entities=tuple(row.entities),
                last_request=row.last_request,
                last_outcome=row.last_outcome,
                last_active=row.last_active,
            )
            for row in rows
        ]

    async def count(self, person: str) -> int:
        query = select(func.count()).select_from(cards).where(cards.c.person == person)
        async with self._sessions() as db:
            return int((await db.execute(query)).scalar_one())


class DecisionLog:
    def __init__(self, engine: AsyncEngine) -> None:
        self._sessions = database.sessionmaker(engine)

    async def record(self, decision: Decision) -> None:
        async with self._sessions() as db, db.begin():
            await db.execute(
                insert(decisions).values(
                    id=uuid.uuid4().hex,
                    person=decision.person,
                    request=decision.request,
                    candidates=decision.candidates,
                    scores=decision.scores,
                    pick=decision.pick,
                    topic=decision.topic,
                    confidence=decision.confidence,
                    reason=decision.reason,
                    opening=decision.opening,
                    at=decision.at,
                )
            )

    async def recent(self, person: str, limit: int) -> Sequence[Decision]:
        """The person's latest decisions, newest first."""
        query = (
            select(decisions)
            .where(decisions.c.person == person)
            .order_by(decisions.c.at.desc(), decisions.c.id)
            .limit(limit)
        )
        async with self._sessions() as db:
            rows = (await db.execute(query)).all()
        return [
            Decision(
                person=row.person,
                request=row.request,
                candidates=list(row.candidates),
                scores=[float(s) for s in row.scores],
                pick=row.pick,
                topic=row.topic,
                confidence=row.confidence,
                reason=row.reason,
                opening=row.opening,
                at=row.at,
            )
            for row in rows
        ]
