"""Consolidation: when a person has gone quiet, their facts are tidied.

- Facts whose provenance no longer checks out are withdrawn (deleted, and what they had
  superseded comes back): each fact is checked again against the source rule, a `you` fact
  against the person's own words it was made from (while any of them is kept: a retention trim
  takes them, never the fact), a `violet` fact against its deed. So the rule holds for memory
  made before it, or by an earlier version of it.
- Duplicates merge: the same fact said again (the same words, the same subject and value, or
  vectors nearly the same) becomes one item, the newest, carrying every source.
- A newer fact supersedes an older one on the same subject with another value ("I moved to
  Lyon" supersedes "I live in Paris"), and the older one's turns leave recall with it.
Superseded items stay in SQL as history (`superseded_by`); only their vectors go.

The nightly sleep pass does the same for everyone, then compacts: forgotten items past the undo
window are deleted for good, and the vector store is brought in line with SQL.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memory.capture import Capturer
from memory.deeds import from_json, item_text
from memory.indexing import reindex
from memory.merging import Step, plan, settle
from memory.passages import PassageQueue
from memory.provenance import VIOLET, YOU, Proposed, checks_out
from memory.store import FACT, Item, MemoryStore, PersonMemory
from violet.clock import utc_now
from violet.tasks import cancel_all
from violet.vectors import VectorStore

log = logging.getLogger(__name__)

CONSOLIDATION_LEASE = timedelta(minutes=5)
# Cosine of two facts' vectors from which they say the same thing. The embedder's cosines are
# high for any two short sentences: "I prefer tea" and "I prefer coffee" are at 0.95, "I like
# green tea" and "I love green tea" at 0.99.
SAME_FACT_COSINE = 0.97
NEIGHBOURS = 4


@dataclass(frozen=True)
class Consolidated:
    steps: list[Step]
    withdrawn: int


def founded(fact: Item, said: Mapping[str, str]) -> bool:
    """Whether a fact checks out: a `you` fact against the person's own messages it was made
    from (`said`, by turn item), a `violet` fact against the deed it was made of. A `you` fact
    whose turn items are all gone (their transcript trimmed, `memory.person_data`) was checked
    when it was made, and stands: what the person kept stays."""
    if fact.origin == YOU:
        if fact.turn_items and not any(turn in said for turn in fact.turn_items):
            return True
        claim = Proposed(fact.text, YOU, fact.quote)
        return any(checks_out(claim, said[turn]) for turn in fact.turn_items if turn in said)
    if fact.origin == VIOLET:
        deed = from_json(fact.quote)
        return deed is not None and item_text(deed) == fact.text
    return False


@dataclass
class Sleep:
    people: int = 0
    merged: int = 0
    superseded: int = 0
    withdrawn: int = 0
    purged: int = 0
    repaired: int = 0
    failed: list[str] = field(default_factory=list)


class Consolidator:
    def __init__(
        self,
        store: MemoryStore,
        vectors: VectorStore,
        passages: PassageQueue,
        capturer: Capturer,
    ) -> None:
        self._store = store
        self._vectors = vectors
        self._passages = passages
        self._capturer = capturer
        # The quiet consolidation under way on this replica, by person.
        self._running: dict[str, asyncio.Task[Consolidated]] = {}

    async def consolidate(self, person: str) -> Consolidated:
        """Makes the items of any turn still waiting, withdraws facts that do not check out,
        then merges and supersedes facts."""
        await self._capturer.extract(person)
        withdrawn = await self._withdraw_unfounded(person)
        facts = await self._store.read(person, lambda memory: memory.active_items(FACT))
        steps = plan(facts, await self._alike(person, facts))
        await settle(self._store, self._vectors, self._passages, person, steps)
        await self._store.run(person, _drop_extracted_turns)
        return Consolidated(steps, withdrawn)

    async def consolidate_when_quiet(self, quiet_s: float, sweep_s: float) -> None:
        """Runs until cancelled: consolidates each person idle for `quiet_s` since they spoke."""
        while True:
            await asyncio.sleep(sweep_s)
            try:
                for person in await self._store.quiet_people(
                    utc_now() - timedelta(seconds=quiet_s)
                ):
                    await self._consolidate_claimed(person)
            except Exception:  # a database hiccup: the next sweep tries again
                log.exception("quiet consolidation failed")

    async def _consolidate_claimed(self, person: str) -> None:
        started = utc_now()
        if not await self._store.claim_consolidation(person, started + CONSOLIDATION_LEASE):
            return
        running = asyncio.create_task(self.consolidate(person))
        self._running[person] = running
        try:
            # Waited for without being cancelled with it: `stop_for` ends it, and the sweep goes on.
            await asyncio.wait([running])
        except asyncio.CancelledError:
            await cancel_all([running])
            raise
        finally:
            self._running.pop(person, None)
        if not running.cancelled():
            running.result()
            await self._store.consolidated(person, started)

    async def stop_for(self, person: str) -> None:
        """Ends the person's quiet consolidation under way on this replica, if any."""
        running = self._running.get(person)
        if running is not None:
            await cancel_all([running])

    async def sleep(self, undo_window: timedelta) -> Sleep:
        """The nightly pass over everyone: consolidate, purge, repair, compact."""
        report = Sleep()
        for person in await self._store.people():
            report.people += 1
            try:
                done = await self.consolidate(person)
                report.merged += sum(step.merge for step in done.steps)
                report.superseded += sum(not step.merge for step in done.steps)
                report.withdrawn += done.withdrawn
                report.purged += await self._purge(person, utc_now() - undo_window)
                report.repaired += await self._repair(person)
            except Exception:
                log.exception("sleep pass failed for a person")
                report.failed.append(person)
        await self._vectors.compact()
        return report

    async def _alike(self, person: str, facts: Sequence[Item]) -> dict[str, set[str]]:
        """For each fact, the person's other facts whose vectors say nearly the same."""
        if len(facts) < 2:
            return {}
        stored = {
            point.id: point.vector
            for point in await self._vectors.scroll(person)
            if point.kind == FACT
        }
        alike: dict[str, set[str]] = {}
        for fact in facts:
            if fact.id not in stored:
                continue
            near = await self._vectors.search(person, stored[fact.id], NEIGHBOURS, FACT)
            alike[fact.id] = {n.id for n in near if n.id != fact.id and n.score >= SAME_FACT_COSINE}
        return alike

    async def _withdraw_unfounded(self, person: str) -> int:
        """Deletes every fact of the person whose provenance does not check out."""
        unfounded, back = await self._store.run(person, _withdrawn)
        if unfounded:
            log.warning(
                "facts withdrawn: their provenance does not check out",
                extra={"count": len(unfounded)},
            )
            await self._vectors.delete(person, unfounded)
            await reindex(
                self._store, person, self._passages, self._vectors, back, [i.id for i in back]
            )
            await self._store.vectors_stored(person, [item.id for item in back])
        return len(unfounded)

    async def _purge(self, person: str, before: datetime) -> int:
        purged = await self._store.run(person, lambda memory: memory.purge_forgotten(before))
        await self._vectors.delete(person, purged)
        return len(purged)

    async def _repair(self, person: str) -> int:
        """Brings the person's vectors in line with SQL: vectors for exactly the items in recall."""
        stored = {point.id for point in await self._vectors.scroll(person)}
        active = await self._store.read(person, lambda memory: memory.active_items())
        missing = [item for item in active if item.id not in stored]
        stray = sorted(stored - {item.id for item in active})
        await self._vectors.delete(person, stray)
        await reindex(self._store, person, self._passages, self._vectors, missing, stray)
        await self._store.vectors_stored(person, [*(item.id for item in missing), *stray])
        return len(missing) + len(stray)


async def _drop_extracted_turns(memory: PersonMemory) -> None:
    """Compaction, once no turn of the person waits for its facts."""
    if not await memory.has_waiting_turns():
        await memory.drop_extracted_turns()


async def _withdrawn(memory: PersonMemory) -> tuple[list[str], list[Item]]:
    """Withdraws the facts whose provenance does not check out: their ids, and the items that
    came back to recall."""
    facts = await memory.facts()
    turns = await memory.items({turn for fact in facts for turn in fact.turn_items})
    said = {turn.id: turn.text for turn in turns}
    unfounded = [fact.id for fact in facts if not founded(fact, said)]
    return unfounded, await memory.withdraw(unfounded)
