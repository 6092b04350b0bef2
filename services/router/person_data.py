"""The person's data in the router, for the session's archive and erasure (violet.v1.PersonData).

The router keeps only its own routing state, so it exports nothing; erasing removes all of it,
and trimming the decisions older than the transcript kept (each holds the words it routed).
Cards stay while their work does: each describes a topic of the person's as it is now.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from sqlalchemy.ext.asyncio import AsyncSession

from router.index import CardIndex
from router.store import CardStore, DecisionLog
from router.tables import lifetimes, metadata
from violet.database import rows_changed
from violet.person_data import Erased, Horizon, Record

log = logging.getLogger(__name__)

# Every table of the router, and the archive section it feeds or why it feeds none.
CHECKLIST: dict[str, str] = {
    "topic_cards": (
        "internal: Violet's own notes for routing, one per work session; the person's words in "
        "them are exported by the session as the conversation, the work itself by the worker"
    ),
    "route_decisions": (
        "internal: routing words, candidates and scores; the request routed is the person's "
        "own words, exported by the session as the conversation"
    ),
    "routing_lifetimes": (
        "internal: when the person's routing state began, so that erasing them stops a write "
        "begun before"
    ),
}

# What Export streams: no record, as no table feeds a section (CHECKLIST).
EXPORTED: tuple[Record, ...] = ()


class Erasure:
    """Removes everything the router holds of a person: their rows in every table and their
    card vectors. The router keeps nothing of a person in its process between calls (its card
    index is the vector store itself), so there is no cache to empty."""

    def __init__(self, cards: CardStore, index: CardIndex, decisions: DecisionLog) -> None:
        self._cards = cards
        self._index = index
        self._decisions = decisions

    async def export(self, person: str) -> AsyncIterator[Record]:
        """Nothing: the cards and decisions are Violet's own routing notes, and routing words
        must never reach a person; what the person said is in the session's conversation."""
        for record in EXPORTED:
            yield record

    async def erase(self, person: str) -> Erased:
        """Idempotent: everything happens in one transaction, except the vectors, which go
        before it commits; a call after a crash finds the rows still there and what is left of
        the vectors, and removes those."""
        # The lifetime ends first: no write of the person's is under way past this point, nor
        # can one begin, on any replica, before this transaction commits (store.Lifetimes).
        async with self._cards.lifetimes.ending(person) as (db, ended):
            vectors = 0
            async for topics in self._cards.topic_pages(db, person):
                vectors += await self._index.erase(person, topics)
            vectors += await self._index.erase_rest(person)
            rows = ended + await _delete_rows(db, person)
        log.info("erased a person's routing state", extra={"rows": rows, "vectors": vectors})
        return Erased(rows=rows, vectors=vectors)

    async def trim(self, person: str, horizon: Horizon) -> Erased:
        """The decisions made before the transcript's horizon: each holds the words it routed,
        which the transcript no longer does."""
        if horizon.transcript_before is None:
            return Erased()
        rows = await self._decisions.forget_before(person, horizon.transcript_before)
        log.info("trimmed a person's routing decisions", extra={"rows": rows})
        return Erased(rows=rows)


async def _delete_rows(db: AsyncSession, person: str) -> int:
    """Deletes the person's rows in every table but the lifetimes (`Lifetimes.ending` ends
    those); every table names its person (tests/unit/test_router_person_data.py)."""
    removed = 0
    for table in reversed(metadata.sorted_tables):
        if table is not lifetimes:
            deleted = await db.execute(table.delete().where(table.c.person == person))
            removed += rows_changed(deleted)
    return removed
