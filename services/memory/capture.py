"""Capture: a finished turn is stored at once and turned into memory items in the background.

Capture returns as soon as the turn is durably stored, so it never slows the person's answer.
A background pass per person then makes:
- a turn item: the person's own message as said (recalled, not listed on the memory page);
- facts about the person: what the fast model's origin call proposes from the person's message,
  kept only when the provenance filter finds each quote stated there (`memory.provenance`);
- Violet's own facts: one per deed of background work, in words code chooses (`memory.deeds`);
- a told record of what Violet told in the turn, with its sources (`memory.told`), never a fact
  about the person.
Each new fact is settled against the person's facts at once (`memory.merging`): the same fact
said again keeps one item, a new value for the same thing replaces the old one.
A turn another replica holds (a claim with a lease) is left to it; a turn whose pass died is taken
up again by the quiet consolidation or the nightly pass.

A pass keeps what it made only while its turn is still there (`PersonMemory.turn_done`, which on
PostgreSQL holds the turn's row until the pass commits): when the person's memory was erased or
forgotten whole meanwhile, on any replica, the pass stores nothing and removes the vectors it
stored.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import partial

from memory.context import CONTEXT_GAP
from memory.deeds import Deed, item_text
from memory.indexing import Vector, index_items
from memory.merging import drop_vectors, give_way, plan
from memory.passages import PassageQueue
from memory.provenance import VIOLET, YOU, Proposed, keep
from memory.queries import RecentQueries
from memory.store import (
    FACT,
    TOLD,
    TURN,
    CapturedTurn,
    Item,
    MemoryStore,
    NewTurn,
    PersonMemory,
    new_item_id,
)
from memory.subjects import subject_of
from memory.told import replaced, told_item
from violet.clock import utc_now
from violet.fallbacks import fallback
from violet.models import ModelClient, ModelError, origin
from violet.tasks import cancel_all
from violet.vectors import VectorStore

log = logging.getLogger(__name__)

CLAIM_LEASE = timedelta(minutes=2)
BATCH = 32
# An origin call that keeps failing leaves the turn with its turn item only.
MAX_ATTEMPTS = 3
# People whose latest turn item's vector is kept (1.5 KB each).
LATEST_KEPT = 4096


@dataclass(frozen=True)
class Made:
    """What a step of the pass made of one captured turn."""

    turn: CapturedTurn
    items: list[Item]
    turn_item: str | None
    extracted: bool
    attempts: int


class Capturer:
    def __init__(
        self,
        store: MemoryStore,
        vectors: VectorStore,
        passages: PassageQueue,
        queries: RecentQueries,
        model: ModelClient,
    ) -> None:
        self._store = store
        self._vectors = vectors
        self._passages = passages
        self._queries = queries
        self._model = model
        self._wanted: set[str] = set()
        self._passes: dict[str, asyncio.Task[None]] = {}
        # Each person's latest turn item made here, with its own vector: the next turn is read
        # after it, and its vector need not be fetched from the vector store.
        self._latest: OrderedDict[str, tuple[str, Vector]] = OrderedDict()

    async def accept(self, person: str, turn: NewTurn) -> None:
        """Stores the turn and starts its background pass; returns before any model call. While
        the person's memory is being erased the turn is not kept."""
        stored = await self._store.run(person, lambda memory: memory.add_turn(turn))
        if stored is None:
            log.info("a turn was not captured: the person's memory is being erased")
            return
        self.kick(person)

    def kick(self, person: str) -> None:
        self._wanted.add(person)
        if person not in self._passes:
            self._passes[person] = asyncio.create_task(self._passes_for(person))

    async def settled(self, person: str) -> None:
        """Waits until the person's background passes are done."""
        while person in self._passes:
            await asyncio.shield(self._passes[person])

    async def stop(self) -> None:
        await cancel_all(self._passes.values())

    async def stop_for(self, person: str) -> None:
        """Ends the person's background pass on this replica, wanted or under way. What it had
        not saved yet is dropped; its turns stay stored, as do vectors it stored before saving
        (an erase removes both with the rest of the person's memory)."""
        self._wanted.discard(person)
        self._latest.pop(person, None)
        under_way = self._passes.get(person)
        if under_way is not None:
            await cancel_all([under_way])

    async def _passes_for(self, person: str) -> None:
        try:
            while person in self._wanted:
                self._wanted.discard(person)
                try:
                    await self.extract(person)
                except Exception:  # the turns stay stored; the quiet pass takes them up again
                    log.exception("capture pass failed")
        finally:
            del self._passes[person]

    async def extract(self, person: str) -> None:
        """Makes the items of every turn of the person that waits."""
        after = 0
        while True:
            turns, previous = await self._store.run(person, partial(_claim, after=after))
            if not turns:
                return
            await self._make_items(person, turns, previous)
            if len(turns) < BATCH:
                # None was left to claim: a turn captured since kicks off another pass, and one
                # another replica holds stays with it.
                return
            after = turns[-1].id

    async def _make_items(
        self, person: str, turns: Sequence[CapturedTurn], previous: Item | None
    ) -> None:
        # The origin calls start at once, and the turn items do not wait for them: those are
        # recallable before slower calls are done. When the calls are done (and did not fail) by
        # the time the turn items' vectors are stored, everything is saved in one transaction.
        proposing = asyncio.create_task(self._propose(person, turns))
        try:
            made = await self._make_turn_items(person, turns, previous)
            if not proposing.done() or proposing.exception() is not None:
                kept = await self._save(person, made, release=False)
                made = [m for m in made if m.turn.id in kept]
                made = [Made(m.turn, [], m.turn_item, False, m.attempts) for m in made]
            proposals = await proposing
        finally:
            proposing.cancel()
        with_facts = [
            _joined(m, self._facts_of(person, replace(m.turn, turn_item=m.turn_item), proposals))
            for m in made
        ]
        facts = [item for result in with_facts for item in result.items if item.kind != TURN]
        await index_items(self._passages, self._vectors, facts, {})
        await self._save(person, with_facts, settle_facts=bool(facts))

    async def _make_turn_items(
        self, person: str, turns: Sequence[CapturedTurn], previous: Item | None
    ) -> list[Made]:
        """The turn items of the turns that have none yet, with their vectors stored."""
        made: list[Made] = []
        read_after: dict[str, Item] = {}
        for turn in turns:
            if turn.turn_item is not None or not turn.person_message.strip():
                made.append(Made(turn, [], turn.turn_item, False, turn.attempts))
                continue
            item = _turn_item(person, turn, previous)
            if item.previous_item and previous is not None:
                read_after[item.id] = previous
            previous = item
            made.append(Made(turn, [item], item.id, False, turn.attempts))
        items = [item for result in made for item in result.items]
        # The session recalled with the person's message: its query vector is the item's own.
        recalled = {item.id: self._queries.take(person, item.text) for item in items}
        known = {item_id: vector for item_id, vector in recalled.items() if vector is not None}
        latest = self._latest.get(person)
        if latest is not None:
            known.setdefault(*latest)
        points = await index_items(self._passages, self._vectors, items, read_after, known)
        if points:
            self._latest[person] = (points[-1].id, points[-1].vector)
            self._latest.move_to_end(person)
            while len(self._latest) > LATEST_KEPT:
                self._latest.popitem(last=False)
        return made

    async def _propose(
        self, person: str, turns: Sequence[CapturedTurn]
    ) -> dict[int, list[Proposed] | ModelError]:
        """The origin call's proposals for each turn with words of the person, one call at a
        time; a failed call gives its error."""
        proposals: dict[int, list[Proposed] | ModelError] = {}
        for turn in turns:
            if not turn.person_message.strip():
                continue
            try:
                proposed = await origin(
                    self._model,
                    person_message=turn.person_message,
                    violet_answer=turn.violet_answer,
                    person=person,
                )
            except ModelError as error:
                proposals[turn.id] = error
                continue
            proposals[turn.id] = [Proposed(p.text, p.origin, p.quote) for p in proposed]
        return proposals

    def _facts_of(
        self,
        person: str,
        turn: CapturedTurn,
        proposals: Mapping[int, list[Proposed] | ModelError],
    ) -> Made:
        deeds = [_deed_fact(person, turn, deed) for deed in turn.deeds]
        done = [fact for fact in [*deeds, told_item(person, turn)] if fact is not None]
        proposed = proposals.get(turn.id)
        if proposed is None:  # no words of the person: nothing to ask the model
            return Made(turn, done, turn.turn_item, True, turn.attempts)
        if isinstance(proposed, ModelError):
            attempts = turn.attempts + 1
            given_up = attempts >= MAX_ATTEMPTS
            if given_up:
                fallback("capture_stored_nothing", f"{proposed}; after {attempts} tries")
            else:
                fallback("origin_failed", f"{proposed}; tried again later", attempts=attempts)
            return Made(turn, done if given_up else [], turn.turn_item, given_up, attempts)
        kept = keep(proposed, person_message=turn.person_message)
        facts = [_fact(person, turn, p) for p in kept]
        return Made(turn, [*facts, *done], turn.turn_item, True, turn.attempts + 1)

    async def _save(
        self, person: str, made: Sequence[Made], release: bool = True, settle_facts: bool = False
    ) -> set[int]:
        """Stores what the turns gave; returns the ids of the turns still there (a turn is gone
        when the person forgot everything meanwhile, and then nothing of it may come back).
        With `settle_facts`, new facts take their place among the person's facts in the same
        transaction, so the page and recall never show an old value beside its new one."""
        kept, vanished, left = await self._store.run(
            person, partial(_saved, made=made, release=release, settle_facts=settle_facts)
        )
        if vanished:
            await self._vectors.delete(person, vanished)
        await drop_vectors(self._store, self._vectors, self._passages, person, left)
        return kept


async def _saved(
    memory: PersonMemory, made: Sequence[Made], release: bool, settle_facts: bool
) -> tuple[set[int], list[str], list[str]]:
    """`Capturer._save` in its transaction: the turns kept, the items of those gone, and the
    ids that left recall."""
    kept: set[int] = set()
    vanished: list[str] = []
    for result in made:
        if await memory.turn_done(
            result.turn.id,
            turn_item=result.turn_item,
            extracted=result.extracted,
            attempts=result.attempts,
            release=release,
        ):
            await memory.add_items(result.items)
            kept.add(result.turn.id)
        else:
            vanished += [item.id for item in result.items]
    facts = await memory.active_items(FACT) if settle_facts else []
    left = await give_way(memory, plan(facts, {}))
    told = [item for result in made for item in result.items if item.kind == TOLD]
    left += await _replace_told(memory, told, vanished)
    return kept, vanished, left


async def _claim(memory: PersonMemory, after: int) -> tuple[list[CapturedTurn], Item | None]:
    """Claims the turns that wait, with the turn item the first one is read after."""
    turns = await memory.claim_turns(utc_now() + CLAIM_LEASE, BATCH, after_id=after)
    return turns, await memory.last_turn_item(turns[0].at) if turns else None


async def _replace_told(
    memory: PersonMemory, told: Sequence[Item], vanished: Sequence[str]
) -> list[str]:
    """New told records take the place of those they replace; the ids that left recall."""
    kept = [item for item in told if item.id not in vanished]
    if not kept:
        return []
    earlier = await memory.active_items(TOLD)
    left: list[str] = []
    for item in kept:
        for older in replaced(item, [e for e in earlier if e.id not in left]):
            left += await memory.supersede(older, item.id, merge=False)
    return left


def _joined(turn_items: Made, facts: Made) -> Made:
    """What a turn gave: its turn item (when not saved already) and its facts."""
    return replace(facts, items=[*turn_items.items, *facts.items])


def _turn_item(person: str, turn: CapturedTurn, previous: Item | None) -> Item:
    follows = previous is not None and turn.at - previous.created_at <= CONTEXT_GAP
    return Item(
        id=new_item_id(),
        person=person,
        kind=TURN,
        text=turn.person_message.strip(),
        origin=YOU,
        quote=turn.person_message.strip(),
        speaker=turn.speaker,
        source_seqs=turn.source_seqs,
        turn_items=(),
        previous_item=previous.id if follows and previous else None,
        subject=None,
        subject_value=None,
        created_at=turn.at,
        updated_at=utc_now(),
    )


def _fact(person: str, turn: CapturedTurn, proposed: Proposed) -> Item:
    subject = subject_of(proposed.text)
    return Item(
        id=new_item_id(),
        person=person,
        kind=FACT,
        text=" ".join(proposed.text.split()),
        origin=YOU,
        quote=proposed.quote,
        speaker=turn.speaker,
        source_seqs=turn.source_seqs,
        turn_items=(turn.turn_item,) if turn.turn_item else (),
        previous_item=None,
        subject=subject.name if subject else None,
        subject_value=subject.value if subject else None,
        created_at=turn.at,
        updated_at=utc_now(),
    )


def _deed_fact(person: str, turn: CapturedTurn, deed: Deed) -> Item | None:
    """Violet's item for a deed; its quote is the deed itself, so that the words can be
    checked again later."""
    text = item_text(deed)
    if text is None:
        log.info("a deed broke a memory rule and is not remembered", extra={"done": deed.done})
        return None
    return Item(
        id=new_item_id(),
        person=person,
        kind=FACT,
        text=text,
        origin=VIOLET,
        quote=deed.as_json(),
        speaker="",
        source_seqs=turn.source_seqs,
        turn_items=(),
        previous_item=None,
        subject=None,
        subject_value=None,
        created_at=turn.at,
        updated_at=utc_now(),
    )
