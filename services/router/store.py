"""SQL storage of topic cards and routing decisions; every query is scoped to one person.

Every write of a person's is made inside `Lifetimes.claimed`, so erasing the person (see
`Lifetimes`) cuts off a write begun before it, on any replica."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from router.cards import Card
from router.tables import cards, decisions, lifetimes
from violet import database
from violet.clock import utc_now

# Erasing reads the person's card topics this many at a time.
TOPIC_PAGE = 100
# The lifetime an erasure sets while it runs: no write's lifetime is ever empty.
ENDING = ""


class PersonErased(Exception):
    """The person was erased while a write of theirs was under way: nothing of it was kept."""


class Lifetimes:
    """The lifetime of each person's routing state: how an erasure stops every write of theirs,
    on any replica.

    A call that writes reads the person's lifetime as it begins (`current`), and makes its rows
    and card vectors inside `claimed`, whose first statement updates the person's lifetime row
    only if it still holds that lifetime. The update holds the row's lock (on SQLite, the
    database's one write lock) until the write commits. An erasure (`ending`) takes the same row
    first and deletes it last, in one transaction: a write either commits before the erasure
    takes the row, and is erased with the rest, or finds its lifetime ended and writes nothing.
    A call that begins once the erasure has committed begins a new lifetime, as a new person's
    first call does, so nothing of the person stays behind to mark that they were erased.
    """

    def __init__(self, engine: AsyncEngine) -> None:
        self._sessions = database.sessionmaker(engine)

    async def current(self, person: str) -> str:
        """The person's lifetime, begun now if they have none."""
        query = select(lifetimes.c.lifetime).where(lifetimes.c.person == person)
        async with self._sessions() as db:
            found = (await db.execute(query)).scalar_one_or_none()
        if found is not None:
            return str(found)
        async with self._sessions() as db, db.begin():
            begin = database.conflict_insert(lifetimes, postgres=database.is_postgres_session(db))
            await db.execute(
                begin.values(
                    person=person, lifetime=uuid.uuid4().hex, began_at=utc_now()
                ).on_conflict_do_nothing(index_elements=[lifetimes.c.person])
            )
            found = (await db.execute(query)).scalar_one_or_none()
        if not found:  # the lifetime another call had just begun was erased meanwhile
            raise PersonErased(f"{person} is being erased")
        return str(found)

    @contextlib.asynccontextmanager
    async def claimed(self, person: str, lifetime: str) -> AsyncIterator[AsyncSession]:
        """A transaction for the person's writes that holds their lifetime row until it
        commits; raises PersonErased, having written nothing, once that lifetime has ended."""
        claim = (
            update(lifetimes)
            .where(lifetimes.c.person == person, lifetimes.c.lifetime == lifetime)
            .values(lifetime=lifetime)
        )
        async with self._sessions() as db, db.begin():
            if database.rows_changed(await db.execute(claim)) == 0:
                raise PersonErased(f"{person} was erased while the write was under way")
            yield db

    @contextlib.asynccontextmanager
    async def ending(self, person: str) -> AsyncIterator[tuple[AsyncSession, int]]:
        """A transaction that ends the person's lifetime: it takes their lifetime row before
        anything else (waiting for a write that holds it to commit) and deletes it last. Yields
        the transaction and how many lifetime rows there were (0 or 1)."""
        person_is = lifetimes.c.person == person
        async with self._sessions() as db, db.begin():
            existed = database.rows_changed(
                await db.execute(update(lifetimes).where(person_is).values(lifetime=ENDING))
            )
            if not existed:
                # A row of the erasure's own holds the person's key, so that a lifetime begun
                # meanwhile waits for the erasure to commit rather than write beside it.
                hold = database.conflict_insert(
                    lifetimes, postgres=database.is_postgres_session(db)
                )
                await db.execute(
                    hold.values(
                        person=person, lifetime=ENDING, began_at=utc_now()
                    ).on_conflict_do_update(
                        index_elements=[lifetimes.c.person], set_={"lifetime": ENDING}
                    )
                )
            yield db, existed
            await db.execute(lifetimes.delete().where(person_is))


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
        self._lifetimes = Lifetimes(engine)

    @property
    def lifetimes(self) -> Lifetimes:
        """The lifetimes the cards (and the decisions beside them) are written within."""
        return self._lifetimes

    async def put(self, db: AsyncSession, person: str, card: Card) -> None:
        """Writes the card in `db`, a transaction `Lifetimes.claimed` holds for the person: it
        serialises the person's writes, so two replicas never both insert one card."""
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
        changed = await db.execute(update(cards).where(where).values(**values))
        if database.rows_changed(changed) == 0:
            await db.execute(insert(cards).values(person=person, topic=card.topic, **values))

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

    @staticmethod
    async def topic_pages(db: AsyncSession, person: str) -> AsyncIterator[list[str]]:
        """The topics of the person's cards in `db`, TOPIC_PAGE at a time, in topic order."""
        after = ""
        while True:
            query = (
                select(cards.c.topic)
                .where(cards.c.person == person, cards.c.topic > after)
                .order_by(cards.c.topic)
                .limit(TOPIC_PAGE)
            )
            page = list((await db.scalars(query)).all())
            if not page:
                return
            yield page
            after = page[-1]


class DecisionLog:
    def __init__(self, engine: AsyncEngine) -> None:
        self._sessions = database.sessionmaker(engine)

    @staticmethod
    async def record(db: AsyncSession, decision: Decision) -> None:
        """Logs the decision in `db`, a transaction `Lifetimes.claimed` holds for its person."""
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

    async def forget_before(self, person: str, moment: datetime) -> int:
        """Deletes the person's decisions made before `moment`; how many there were."""
        async with self._sessions() as db, db.begin():
            deleted = await db.execute(
                decisions.delete().where(decisions.c.person == person, decisions.c.at < moment)
            )
        return database.rows_changed(deleted)

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
