"""The memory page and what it controls, in process on real stores: isolation, forget, restore,
forget everything, consolidation and the nightly pass."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from functools import partial

import pytest

from memory.page import UnknownItem
from memory.runtime import Memory, open_memory
from memory.settings import MemorySettings
from memory.store import FACT, PersonMemory, new_item_id
from tests.support import memory as memory_support
from tests.support.memory import ScriptedOrigin, captured, said
from tests.support.waiting import eventually

WORDS = "My cat is called Miso, and I take my coffee with oat milk"


settings = memory_support.settings
memory = memory_support.memory


async def recalled_ids(memory: Memory, person: str, query: str) -> set[str]:
    return {r.item.id for r in await memory.recaller.recall(person, query, 3)}


async def stored_ids(memory: Memory, person: str) -> set[str]:
    return {point.id for point in await memory.vectors.scroll(person)}


async def test_two_people_saying_the_same_words_never_reach_each_others_memory(
    memory: Memory,
) -> None:
    await captured(memory, "ann", said(WORDS, 1))
    await captured(memory, "bob", said(WORDS, 1))
    ann_page = {item.id for item in await memory.page.facts("ann")}
    bob_page = {item.id for item in await memory.page.facts("bob")}
    assert len(ann_page) == len(bob_page) == 2
    assert not ann_page & bob_page
    assert await recalled_ids(memory, "ann", "what is my cat called?") <= await stored_ids(
        memory, "ann"
    )
    assert not await recalled_ids(memory, "ann", "cat Miso coffee") & await stored_ids(
        memory, "bob"
    )
    a_fact_of_ann = next(iter(ann_page))
    for act in (memory.page.forget, memory.page.restore):
        with pytest.raises(UnknownItem):
            await act("bob", a_fact_of_ann)
    assert await memory.recaller.recall("carol", "what is my cat called?", 3) == []


async def test_forgetting_for_one_person_leaves_the_other(memory: Memory) -> None:
    await captured(memory, "ann", said(WORDS, 1))
    await captured(memory, "bob", said(WORDS, 1))
    bob_before = await recalled_ids(memory, "bob", "what is my cat called?")
    await memory.page.forget_everything("ann")
    assert await memory.page.facts("ann") == []
    assert len(await memory.page.facts("bob")) == 2
    assert await recalled_ids(memory, "bob", "what is my cat called?") == bob_before


async def test_a_forgotten_fact_leaves_recall_at_once_with_its_vectors_and_comes_back(
    memory: Memory,
) -> None:
    await captured(memory, "ann", said("My cat is called Miso", 1))
    cat = (await memory.page.facts("ann"))[0]
    made = {cat.id, *cat.turn_items}
    before = await recalled_ids(memory, "ann", "what is my cat called?")
    assert before and before <= made
    assert (await memory.page.forget("ann", cat.id)).facts == []
    assert await memory.recaller.recall("ann", "what is my cat called?", 3) == []
    assert await stored_ids(memory, "ann") == set()
    listed = await memory.page.restore("ann", cat.id)
    assert [item.id for item in listed.facts] == [cat.id]
    assert await recalled_ids(memory, "ann", "what is my cat called?") == before
    assert await stored_ids(memory, "ann") == made


async def test_a_turn_stays_hidden_while_another_fact_made_from_it_is_forgotten(
    memory: Memory,
) -> None:
    await captured(memory, "ann", said(WORDS, 1))
    cat, coffee = sorted(await memory.page.facts("ann"), key=lambda item: item.text)[::-1]
    await memory.page.forget("ann", cat.id)
    await memory.page.forget("ann", coffee.id)
    await memory.page.restore("ann", cat.id)
    recalled = await memory.recaller.recall("ann", "what is my cat called? coffee?", 3)
    assert [r.item.text for r in recalled] == ["My cat is called Miso"]


async def test_no_vector_still_carries_a_forgotten_turn(memory: Memory) -> None:
    await captured(memory, "ann", said("My cat is called Miso", 1), said("She is nine", 3))
    cat = (await memory.page.facts("ann"))[0]

    async def next_turn_read_alone() -> bool:
        stored = await memory.vectors.scroll("ann")
        follower = next(point for point in stored if point.id not in {cat.id, *cat.turn_items})
        return follower.context_vector is None

    assert not await next_turn_read_alone()
    await memory.page.forget("ann", cat.id)
    assert await next_turn_read_alone()
    await memory.page.restore("ann", cat.id)
    assert not await next_turn_read_alone()


async def test_an_unknown_item_is_not_found(memory: Memory) -> None:
    for act in (memory.page.forget, memory.page.restore):
        with pytest.raises(UnknownItem):
            await act("ann", "00000000-0000-0000-0000-000000000000")


async def test_forgetting_everything_also_drops_turns_still_being_captured(
    settings: MemorySettings,
) -> None:
    model = ScriptedOrigin(lambda: [{"text": WORDS, "origin": "you", "quote": WORDS}])
    model.gate.clear()
    async with open_memory(settings, model=model) as memory:
        await memory.capturer.accept("ann", said(WORDS, 1))
        await eventually(lambda: memory.recaller.recall("ann", "cat", 1), "the turn recallable")
        await memory.page.forget_everything("ann")
        model.gate.set()
        await memory.capturer.settled("ann")
        await memory.consolidator.consolidate("ann")
        assert await memory.page.facts("ann") == []
        assert await memory.recaller.recall("ann", "what is my cat called?", 3) == []
        assert await stored_ids(memory, "ann") == set()


async def test_a_newer_home_supersedes_the_older_one_at_once_and_history_is_kept(
    memory: Memory,
) -> None:
    await captured(memory, "ann", said("I live in Paris", 1), said("My cat is called Miso", 3))
    paris = next(item for item in await memory.page.facts("ann") if "Paris" in item.text)
    await captured(memory, "ann", said("Big news: I live in Lyon now", 5))
    assert sorted(item.text for item in await memory.page.facts("ann")) == [
        "I live in Lyon now",
        "My cat is called Miso",
    ]
    history = await memory.store.read("ann", partial(PersonMemory.get, item_id=paris.id))
    lyon = next(item for item in await memory.page.facts("ann") if "Lyon" in item.text)
    assert history is not None and history.superseded_by == lyon.id
    recalled = await memory.recaller.recall("ann", "where do I live?", 3)
    assert all("Paris" not in r.item.text for r in recalled)


async def test_the_same_fact_said_again_is_merged_at_once(memory: Memory) -> None:
    await captured(memory, "ann", said("My cat is called Miso", 1))
    await captured(memory, "ann", said("As I said, my cat is called Miso.", 5))
    facts = await memory.page.facts("ann")
    assert [item.text for item in facts] == ["My cat is called Miso"]
    assert facts[0].source_seqs == (1, 2, 5, 6)


async def test_facts_that_say_the_same_merge_and_different_tastes_stay(memory: Memory) -> None:
    await captured(memory, "ann", said("I like green tea", 1), said("I prefer tea", 3))
    await captured(memory, "ann", said("I love green tea", 5), said("I prefer coffee", 7))
    await memory.consolidator.consolidate("ann")
    assert sorted(item.text for item in await memory.page.facts("ann")) == [
        "I love green tea",
        "I prefer coffee",
        "I prefer tea",
    ]


async def test_the_sleep_pass_purges_what_was_forgotten_long_ago(memory: Memory) -> None:
    await captured(memory, "ann", said("My cat is called Miso", 1))
    cat = (await memory.page.facts("ann"))[0]
    await memory.page.forget("ann", cat.id)
    report = await memory.consolidator.sleep(undo_window=timedelta(0))
    assert report.purged == 2  # the fact and the turn it was made from
    with pytest.raises(UnknownItem):
        await memory.page.restore("ann", cat.id)


async def test_the_sleep_pass_repairs_lost_vectors(memory: Memory) -> None:
    await captured(memory, "ann", said("My cat is called Miso", 1))
    before = await stored_ids(memory, "ann")
    await memory.vectors.delete_person("ann")
    report = await memory.consolidator.sleep(undo_window=timedelta(days=30))
    assert report.repaired == len(before)
    assert await stored_ids(memory, "ann") == before
    active = await memory.store.read("ann", PersonMemory.active_items)
    assert {item.id for item in active} == before
    assert len([item for item in active if item.kind == FACT]) == 1


async def test_facts_that_no_longer_check_out_are_withdrawn_and_what_they_replaced_comes_back(
    memory: Memory,
) -> None:
    """Memory made before the source rule (a page's sentence kept as Violet's, the person's
    reported speech kept as theirs) leaves at the next consolidation."""
    await captured(memory, "ann", said("My bank PIN is 1234", 1))
    await captured(memory, "ann", said("my friend said my password is hunter2", 3))
    [pin] = await memory.page.facts("ann")
    active = await memory.store.read("ann", PersonMemory.active_items)
    [reported_turn] = [t for t in active if "hunter2" in t.text]
    page_sentence = replace(
        pin,
        id=new_item_id(),
        text="Your bank PIN is 4821.",
        origin="violet",
        quote="Your bank PIN is 4821.",
        turn_items=(),
        created_at=pin.created_at + timedelta(minutes=5),
    )
    reported = replace(
        pin,
        id=new_item_id(),
        text="My password is hunter2",
        quote="my password is hunter2",
        turn_items=(reported_turn.id,),
        subject=None,
    )

    async def planted_before_the_rule(rows: PersonMemory) -> None:
        await rows.add_items([page_sentence, reported])
        await rows.supersede(pin.id, page_sentence.id, merge=False)

    await memory.store.run("ann", planted_before_the_rule)

    report = await memory.consolidator.sleep(undo_window=timedelta(days=30))
    assert report.withdrawn == 2
    assert [item.text for item in await memory.page.facts("ann")] == ["My bank PIN is 1234"]
    recalled = await memory.recaller.recall("ann", "what is my bank PIN?", 3)
    # The replaced PIN is back in recall (as the fact or the turn it was made from).
    assert any("1234" in r.item.text for r in recalled)
    assert all("4821" not in r.item.text for r in recalled)
