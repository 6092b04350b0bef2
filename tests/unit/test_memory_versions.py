"""The person's memory version: every change to their items advances it and lists the items."""

from __future__ import annotations

from datetime import timedelta
from functools import partial

from memory.runtime import Memory
from memory.store import FACT, Item, MemoryVersion, PersonMemory
from tests.support import memory as memory_support
from tests.support.memory import captured, said
from violet.clock import utc_now

settings = memory_support.settings
memory = memory_support.memory


async def version(memory: Memory, person: str = "ann") -> MemoryVersion | None:
    return await memory.store.read(person, PersonMemory.version)


async def changed_since(memory: Memory, since: int, person: str = "ann") -> set[str]:
    changes = await memory.store.read(
        person, partial(PersonMemory.version_and_changes, since=since)
    )
    return set(changes.changed) if changes else set()


async def facts(memory: Memory) -> list[Item]:
    return await memory.store.read("ann", partial(PersonMemory.active_items, kind=FACT))


async def test_a_person_without_memory_has_no_version(memory: Memory) -> None:
    assert await version(memory) is None


async def test_a_capture_advances_the_version_and_lists_its_items(memory: Memory) -> None:
    await captured(memory, "ann", said("My cat is called Miso", 1))
    first = await version(memory)
    assert first is not None
    made = {item.id for item in await memory.store.read("ann", PersonMemory.active_items)}
    assert await changed_since(memory, 0) == made
    await captured(memory, "ann", said("I like tea", 3))
    second = await version(memory)
    assert second is not None and second.epoch == first.epoch
    assert second.version > first.version
    now = {item.id for item in await memory.store.read("ann", PersonMemory.active_items)}
    assert await changed_since(memory, first.version) == now - made


async def test_forget_and_restore_each_advance_the_version_and_list_what_left_or_came_back(
    memory: Memory,
) -> None:
    await captured(memory, "ann", said("My cat is called Miso", 1))
    fact = (await facts(memory))[0]
    before = await version(memory)
    assert before is not None
    await memory.page.forget("ann", fact.id)
    forgotten = await version(memory)
    assert forgotten is not None and forgotten.version > before.version
    assert {fact.id, *fact.turn_items} <= await changed_since(memory, before.version)
    await memory.page.restore("ann", fact.id)
    restored = await version(memory)
    assert restored is not None and restored.version > forgotten.version
    assert {fact.id, *fact.turn_items} <= await changed_since(memory, forgotten.version)


async def test_a_superseded_fact_is_listed_as_changed(memory: Memory) -> None:
    await captured(memory, "ann", said("I live in Paris", 1))
    paris = (await facts(memory))[0]
    before = await version(memory)
    assert before is not None
    await captured(memory, "ann", said("I live in Lyon", 3))
    assert paris.id in await changed_since(memory, before.version)


async def test_forgetting_everything_drops_the_version_and_the_next_memory_has_a_new_epoch(
    memory: Memory,
) -> None:
    await captured(memory, "ann", said("My cat is called Miso", 1))
    old = await version(memory)
    await memory.page.forget_everything("ann")
    assert await version(memory) is None
    await captured(memory, "ann", said("I like tea", 1))
    new = await version(memory)
    assert old is not None and new is not None
    assert new.epoch != old.epoch


async def test_another_persons_changes_leave_the_version_alone(memory: Memory) -> None:
    await captured(memory, "ann", said("I like tea", 1))
    before = await version(memory)
    await captured(memory, "bob", said("I like coffee", 1))
    assert await version(memory) == before
    assert await version(memory, "bob") is not None


async def test_purging_drops_the_listed_changes_of_deleted_items_and_says_from_where(
    memory: Memory,
) -> None:
    await captured(memory, "ann", said("My cat is called Miso", 1), said("I like tea", 3))
    fact = next(f for f in await facts(memory) if "Miso" in f.text)
    await memory.page.forget("ann", fact.id)
    forgotten = await version(memory)
    assert forgotten is not None
    before = utc_now() + timedelta(seconds=1)
    purged = await memory.store.run("ann", partial(PersonMemory.purge_forgotten, before=before))
    assert fact.id in purged
    after = await version(memory)
    assert after is not None and after.version == forgotten.version
    assert after.listed_from > forgotten.listed_from
    assert not set(purged) & await changed_since(memory, 0)
