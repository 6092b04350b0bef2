"""A person's memory, to take and to erase (`violet.v1.PersonData`, called by the session).

Export gives what the memory page shows, each section oldest first, read a page of rows at a
time: "remembered" (the facts in recall, Violet's own among them) and "told" (the told records in
recall, with their sources). Turn items are the person's own messages, which the session exports
as the conversation; forgotten and replaced items are no longer kept for the person; ids, quotes,
subjects and versions are internal.

Erase stops the person's memory being written, on every replica, then removes it:
1. The person is named in `memory_erasures`, once every capture of theirs under way on any
   replica has committed (`MemoryStore.begin_erasure`); from then on no replica takes one.
2. Their capture pass and quiet consolidation on this replica are cancelled.
3. Their vectors go by item id, a page at a time, counted.
4. Their rows go in one transaction, as when they forget everything, with their capture mark.
5. Vectors left over (stored meanwhile by another replica, or stray) go.
6. The name leaves `memory_erasures`, and this replica lets go of their ranking index and
   query vectors.
Work another replica started before step 1 (a capture pass, a consolidation, a forget) is not
cancelled from here, and writes nothing that outlives the erase, as each keeps its work only
while what it belongs to is still there: a pass saves only while its captured turn's row exists
(on PostgreSQL it holds that row until it commits, and step 4 waits for it); a change gets a
version only while the person has an item (`PersonMemory._advance`); and a vector stored after
step 5 is deleted by its own writer, who then finds the item's row gone (`Capturer._save`,
`memory.indexing.reindex`). What remains: a replica that dies between storing a vector and
checking for its row leaves that vector behind.

Each step does nothing when nothing is left, so a second call removes nothing, and a call after
one stopped halfway (the person still named, captures still refused) finishes the rest.

Trim lets go of what memory copied of transcript messages that are gone (the operator's retention,
docs/person-data.md): the turn items (the person's messages as said) and told records made of
those messages alone, with their vectors, and the captured turns whose facts were extracted. A
captured turn still waiting stays, with its turn item: the facts about to be made from it name it,
and the next day's trim takes both. Facts stay, even those made from the turns that go: what the
person kept stays. A page of items at a time, their vectors go first, then their rows, in one
transaction that also clears the `previous_item` of a turn read after one of them and records the
changes, so recall on every replica drops them at its next look; that turn's vectors are then made
again from its own words alone. The deleted vectors then leave the embedded store's files
(`VectorStore.purge`, as after an erase), once per trim that deleted any. Nothing is left to
remove after a call, so a second one removes nothing; one after a trim stopped halfway removes
the rest (rows whose vectors went already).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from functools import partial

from memory.capture import Capturer
from memory.consolidation import Consolidator
from memory.indexing import reindex
from memory.passages import PassageQueue
from memory.recall import Recaller
from memory.sources import Source
from memory.store import FACT, TOLD, Item, MemoryStore, PersonMemory
from memory.told import sources_of
from violet.person_data import Erased, Horizon, Record, when
from violet.vectors import VectorStore

log = logging.getLogger(__name__)

# Rows read (and vectors deleted) at a time.
PAGE = 500

# Every table of the service (`memory.tables.metadata`): the export section it feeds, or why it
# feeds none. A table added later fails the test until someone decides.
CHECKLIST = {
    "memory_items": (
        "remembered (facts in recall), told (told records in recall); the rest is internal: turn "
        "items are the person's own messages, exported by the session as the conversation, and "
        "forgotten or replaced items are no longer kept for the person"
    ),
    "captured_turns": (
        "internal: turns waiting to be made into memory, the person's and Violet's words, "
        "exported by the session as the conversation"
    ),
    "memory_people": "internal: who has memory, when they last spoke and were consolidated",
    "memory_versions": "internal: where the person's memory stands, for recall on every replica",
    "memory_changes": "internal: which items changed, for recall on every replica",
    "memory_erasures": "internal: names the person only while their memory is being erased",
    "capture_marks": "internal: how far the person's captures were taken, to store each once",
}

Fields = dict[str, object]


def remembered(item: Item) -> Fields:
    return {"text": item.text, "remembered_at": when(item.created_at)}


def told(item: Item) -> Fields:
    return {
        "text": item.text,
        "told_at": when(item.created_at),
        "sources": [source_record(source) for source in sources_of(item)],
    }


def source_record(source: Source) -> Fields:
    """A source as `violet.v1.Source` names it: a page or a document, and its title."""
    where: Fields = {"page": source.page} if source.page else {"document": source.document}
    return {**where, "title": source.title}


SECTIONS = (("remembered", FACT, remembered), ("told", TOLD, told))


class PersonData:
    def __init__(
        self,
        store: MemoryStore,
        vectors: VectorStore,
        passages: PassageQueue,
        capturer: Capturer,
        consolidator: Consolidator,
        recaller: Recaller,
    ) -> None:
        self._store = store
        self._vectors = vectors
        self._passages = passages
        self._capturer = capturer
        self._consolidator = consolidator
        self._recaller = recaller

    async def export(self, person: str) -> AsyncIterator[Record]:
        """The person's records, section by section, each oldest first."""
        for section, kind, fields in SECTIONS:
            async for item in self._listed(person, kind):
                yield Record(section, fields(item))

    async def _listed(self, person: str, kind: str) -> AsyncIterator[Item]:
        after: tuple[datetime, str] | None = None
        while True:
            listed = partial(PersonMemory.listed_after, kind=kind, after=after, limit=PAGE)
            page = await self._store.read(person, listed)
            for item in page:
                yield item
            if len(page) < PAGE:
                return
            after = (page[-1].created_at, page[-1].id)

    async def erase(self, person: str) -> Erased:
        """Removes every row and vector of the person's memory (the steps above)."""
        await self._store.begin_erasure(person)
        await self._capturer.stop_for(person)
        await self._consolidator.stop_for(person)
        vectors = await self._erase_vectors_of_items(person)
        rows = await self._store.run(person, lambda memory: memory.erase_everything())
        left = len(await self._vectors.scroll(person))
        await self._vectors.delete_person(person)
        await self._vectors.purge()
        await self._store.end_erasure(person)
        await self._recaller.drop(person)
        return Erased(rows=rows, vectors=vectors + left)

    async def _erase_vectors_of_items(self, person: str) -> int:
        erased = 0
        after = ""
        while True:
            ids = await self._store.read(
                person, partial(PersonMemory.ids_after, after=after, limit=PAGE)
            )
            if not ids:
                return erased
            erased += len(await self._vectors.retrieve(person, ids))
            await self._vectors.delete(person, ids)
            after = ids[-1]

    async def trim(self, person: str, horizon: Horizon) -> Erased:
        """Removes what memory copied of the transcript messages that are gone (above)."""
        through = horizon.transcript_through_seq
        if through <= 0:
            return Erased()
        items, turns = await self._store.read(person, partial(_copied_through, seq=through))
        rows = vectors = 0
        trimmed = set(items)
        for start in range(0, len(items), PAGE):
            page = items[start : start + PAGE]
            vectors += await self._erase_vectors(person, page)
            rows += await self._delete_items(person, page, trimmed)
        for start in range(0, len(turns), PAGE):
            deleted = partial(PersonMemory.delete_captured_turns, ids=turns[start : start + PAGE])
            rows += await self._store.run(person, deleted)
        if vectors:
            await self._vectors.purge()
        log.info("a person's memory trimmed", extra={"rows": rows, "vectors": vectors})
        return Erased(rows=rows, vectors=vectors)

    async def _erase_vectors(self, person: str, ids: Sequence[str]) -> int:
        erased = len(await self._vectors.retrieve(person, ids))
        await self._vectors.delete(person, ids)
        return erased

    async def _delete_items(self, person: str, ids: Sequence[str], trimmed: set[str]) -> int:
        """Deletes the items, and embeds again the turns that were read after one of them (but
        those trimmed too, whose vectors go with their page)."""
        rows, followers = await self._store.run(person, lambda memory: memory.delete_trimmed(ids))
        again = [turn for turn in followers if turn.id not in trimmed]
        if again:
            await reindex(self._store, person, self._passages, self._vectors, again, [])
            await self._store.vectors_stored(person, [turn.id for turn in again])
        return rows


async def _copied_through(memory: PersonMemory, seq: int) -> tuple[list[str], list[int]]:
    """The items and the extracted captured turns made of transcript messages up to `seq`."""
    return (
        await memory.transcript_items_through(seq),
        await memory.extracted_turns_through(seq),
    )
