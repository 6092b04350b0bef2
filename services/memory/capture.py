"""Capture: a finished turn is stored at once, recallable from then on, and turned into memory
items in the background.

Capture stores the turn with its turn item (the person's own message as said) in one
transaction, and returns before any model call, so it never slows the person's answer and what
they said can be recalled at their next turn, however far behind the background is. The turn
item's vector is the one recall made of the same message a moment before (`memory.queries`),
stored before the transaction commits; when recall did not make one (it ranked on words, or ran
on another replica), the item is recalled on its words until the pass embeds it.

A capture is taken once: captures come in the order of their transcript seqs, and memory keeps
how far it took them (`PersonMemory.take_capture`), so a capture sent again stores nothing and is
answered as the first was.

A background pass per person then makes:
- the vectors of turn items stored without them, first: they are what a next question needs;
- facts about the person: what the fast model's origin call proposes from the person's message,
  kept only when the provenance filter finds each quote stated there (`memory.provenance`);
- Violet's own facts: one per deed of background work, in words code chooses (`memory.deeds`);
- a told record of what Violet told in the turn, with its sources (`memory.told`), never a fact
  about the person.
Each new fact is settled against the person's facts at once (`memory.merging`): the same fact
said again keeps one item, a new value for the same thing replaces the old one.
A turn another replica holds (a claim with a lease) is left to it; a turn whose pass died is taken
up again by the quiet consolidation or the nightly pass. At most `PASSES_AT_ONCE` people's passes
run at once on a replica; the others wait their turn, their turns stored.

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

from opentelemetry import trace

from memory.context import CONTEXT_GAP, shipped_map
from memory.deeds import Deed, item_text
from memory.indexing import Vector, index_items, reindex
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
from violet.faults import fault_point
from violet.metrics import CAPTURE_PASS_LAG
from violet.models import ModelClient, ModelError, PersonGone, origin
from violet.tasks import cancel_all
from violet.vectors import VectorPoint, VectorStore

log = logging.getLogger(__name__)
tracer = trace.get_tracer(__name__)

CLAIM_LEASE = timedelta(minutes=2)
BATCH = 32
# An origin call that keeps failing leaves the turn with its turn item only.
MAX_ATTEMPTS = 3
# People whose latest turn item's vector is kept (1.5 KB each).
LATEST_KEPT = 4096
# People whose background passes run at once on a replica.
PASSES_AT_ONCE = 64
# A person's turns waiting for their pass at most: past it a capture is refused (`Backlogged`), to
# be sent again once the pass has caught up.
WAITING_TURNS_AT_MOST = 1000


class Backlogged(Exception):
    """The person's turns wait for their pass past `WAITING_TURNS_AT_MOST`: nothing was stored."""


@dataclass(frozen=True)
class Taken:
    """A captured turn as stored, with its turn item (None for a turn without the person's
    words)."""

    turn_id: int
    item: Item | None


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
        self._room = asyncio.Semaphore(PASSES_AT_ONCE)
        # Each person's latest turn item made here, with its own vector: the next turn is read
        # after it, found without a read, and its vector need not be fetched from the vector
        # store. The turn's transaction checks that it is still the latest.
        self._latest: OrderedDict[str, tuple[Item, Vector]] = OrderedDict()

    async def accept(self, person: str, turn: NewTurn) -> bool:
        """Stores the turn with its turn item, recallable from then on, and starts its
        background pass; returns before any model call. False when nothing was stored: a
        repeat of a capture taken already, a turn said before the person last forgot
        everything, or one while their memory is being erased. Raises `Backlogged` when the
        person's turns wait for their pass past the bound."""
        ahead, point = await self._turn_item_ahead(person, turn)
        taken: Taken | None = None
        try:
            taken = await self._store.run(person, partial(_taken, turn=turn, ahead=ahead))
        finally:
            kept = taken is not None and taken.item is not None and taken.item == ahead
            if point is not None and not kept:  # stored ahead for an item not kept
                await asyncio.shield(self._vectors.delete(person, [point.id]))
        fault_point("memory.capture_stored")
        # A repeat too: the pass of the first may have died with its replica.
        self.kick(person)
        if taken is None:
            log.info("a capture stored nothing: taken already, forgotten since, or being erased")
            return False
        if point is not None and taken.item is not None and taken.item == ahead:
            self._keep_latest(person, taken.item, point.vector)
        return True

    async def _turn_item_ahead(
        self, person: str, turn: NewTurn
    ) -> tuple[Item | None, VectorPoint | None]:
        """The turn item with its vectors stored, made before the turn's transaction, when
        recall made the message's vector here: the item and its vectors are then recallable
        together from the commit. Its context vector needs the own vector of the turn before
        it; when that turn has none yet, the pass makes the context later, with its own."""
        said = turn.person_message.strip()
        vector = self._queries.take(person, said) if said else None
        if vector is None:
            return None, None
        latest = self._latest.get(person)
        if latest is not None and latest[0].created_at <= turn.at:
            previous: Item | None = latest[0]
        else:
            previous = await self._store.read(person, lambda m: m.last_turn_item(turn.at))
        item = _turn_item(person, turn, previous)
        context = None
        if item.previous_item is not None:
            before = await self._vector_of(person, item.previous_item)
            if before is not None:
                context = shipped_map(len(vector)).of(before, vector)[0]
        point = VectorPoint(item.id, person, TURN, vector, context)
        await self._vectors.upsert([point])
        return item, point

    async def _vector_of(self, person: str, item_id: str) -> Vector | None:
        latest = self._latest.get(person)
        if latest is not None and latest[0].id == item_id:
            return latest[1]
        stored = await self._vectors.retrieve(person, [item_id])
        return stored[0].vector if stored else None

    def _keep_latest(self, person: str, item: Item, vector: Vector) -> None:
        self._latest[person] = (item, vector)
        self._latest.move_to_end(person)
        while len(self._latest) > LATEST_KEPT:
            self._latest.popitem(last=False)

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
                    async with self._room:
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
        with tracer.start_as_current_span("capture pass") as span:
            span.set_attribute("violet.capture.turns", len(turns))
            await self._make_items_of(person, turns, previous)
        now = utc_now()
        for turn in turns:
            if turn.captured_at is not None:
                CAPTURE_PASS_LAG.record(max(0.0, (now - turn.captured_at).total_seconds()))

    async def _make_items_of(
        self, person: str, turns: Sequence[CapturedTurn], previous: Item | None
    ) -> None:
        # The origin calls start at once, and the turn items do not wait for them: those are
        # recallable before slower calls are done. When the calls are done (and did not fail) by
        # the time the turn items' vectors are stored, everything is saved in one transaction.
        proposing = asyncio.create_task(self._propose(person, turns))
        try:
            made = await self._make_turn_items(person, turns, previous)
            await self._embed_turn_items(person, turns)
            made_now = any(m.items for m in made)
            if made_now and (not proposing.done() or proposing.exception() is not None):
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

    async def _embed_turn_items(self, person: str, turns: Sequence[CapturedTurn]) -> None:
        """Stores the vectors of the turns' items stored without them, and makes again the
        context vectors of the turns read after them (made without theirs)."""
        ids = [turn.turn_item for turn in turns if turn.turn_item is not None]
        if not ids:
            return
        stored = {point.id for point in await self._vectors.retrieve(person, ids)}
        missing = [item_id for item_id in ids if item_id not in stored]
        if not missing:
            return
        items = await self._store.read(person, lambda memory: memory.items(missing))
        waiting = [item for item in items if item.active]
        await reindex(
            self._store, person, self._passages, self._vectors, waiting, [i.id for i in waiting]
        )
        await self._store.vectors_stored(person, [item.id for item in waiting])

    async def _make_turn_items(
        self, person: str, turns: Sequence[CapturedTurn], previous: Item | None
    ) -> list[Made]:
        """The turn items of turns captured without one (before items were made at capture),
        with their vectors stored."""
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
            known.setdefault(latest[0].id, latest[1])
        points = await index_items(self._passages, self._vectors, items, read_after, known)
        if items and points:
            self._keep_latest(person, items[-1], points[-1].vector)
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
        if isinstance(proposed, PersonGone):
            # Their erase, under way, removes the turn with the rest: nothing to tell apart.
            return Made(turn, [], turn.turn_item, True, turn.attempts)
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


async def _taken(memory: PersonMemory, turn: NewTurn, ahead: Item | None) -> Taken | None:
    """`Capturer.accept` in its transaction: the turn and its turn item stored, read after the
    person's turn before it (`ahead` when it was made after the same one); None when nothing is
    to be stored."""
    if await memory.being_erased():
        return None
    if await memory.waiting_turns() >= WAITING_TURNS_AT_MOST:
        raise Backlogged(f"{WAITING_TURNS_AT_MOST} turns wait for their pass")
    if not await memory.take_capture(turn):
        return None
    item = None
    if turn.person_message.strip():
        made = _turn_item(memory.person, turn, await memory.last_turn_item(turn.at))
        follows_the_same = ahead is not None and ahead.previous_item == made.previous_item
        item = ahead if follows_the_same else made
    turn_id = await memory.add_turn(turn, turn_item=item.id if item else None)
    if turn_id is None:
        return None
    if item is not None:
        await memory.add_items([item])
    return Taken(turn_id, item)


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


def _turn_item(person: str, turn: NewTurn, previous: Item | None) -> Item:
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
