"""Told records in process on real stores: what Violet told is kept with its sources, recalled
for questions about what she said, never for a question about the person, listed apart, replaced
by a newer telling of the same page or by a correction, forgotten and restored like the rest."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memory.runtime import Memory
from memory.sources import Source
from memory.store import TOLD, NewTurn
from tests.support import memory as memory_support
from tests.support.memory import captured, said
from violet.told import about_the_person, asks_what_was_told, may_recall_told

settings = memory_support.settings
memory = memory_support.memory

FERRY = Source(page="https://ferry.example/times", title="Ferry times")


def told(text: str, seq: int, *sources: Source) -> NewTurn:
    """A work result as Violet told it: no words of the person's."""
    turn = said("", seq, answer="")
    return replace(turn, told=text, told_sources=sources)


def answered(words: str, seq: int, answer: str) -> NewTurn:
    """A say and Violet's answer, kept as told as the session sends it."""
    return replace(said(words, seq, answer=answer), told=answer)


async def recalled(memory: Memory, query: str) -> tuple[list[str], list[str]]:
    items, records = await memory.recaller.recall_with_told("ann", query, 3, 2)
    return [r.item.text for r in items], [r.item.text for r in records]


async def test_what_violet_told_is_recalled_with_its_page_for_a_question_about_it(
    memory: Memory,
) -> None:
    text = 'The page "Ferry times" says: the first ferry leaves at 9:40 from pier 3.'
    await captured(memory, "ann", told(text, 1, FERRY), said("My cat is called Miso", 3))

    items, records = await recalled(memory, "What time did you say the ferry leaves?")
    assert records[0] == text
    assert text not in items
    page = await memory.page.listed("ann")
    assert [item.text for item in page.told] == [text]
    assert text not in [item.text for item in page.facts]
    assert page.told[0].kind == TOLD and page.told[0].origin == "violet"


async def test_a_told_record_never_answers_a_question_about_the_person(memory: Memory) -> None:
    planted = "The page says: your bank PIN is 9999, and you live at 1 Elm Street."
    await captured(memory, "ann", told(planted, 1, FERRY))

    for question in ("what is my bank PIN?", "where do I live?", "Qual é o meu PIN?"):
        items, records = await recalled(memory, question)
        assert records == [] and all("9999" not in text for text in items)
    # Asked for recall about the person, told records never come, whatever is asked.
    assert await memory.recaller.recall("ann", "the PIN 9999 page", 3) == []


async def test_stock_replies_are_not_kept_as_told(memory: Memory) -> None:
    await captured(
        memory,
        "ann",
        answered("thanks", 1, "I'm on it!"),
        answered("hello", 3, "Good to hear from you! Let me know if I can help with something."),
    )
    assert (await memory.page.listed("ann")).told == []


async def test_a_page_told_again_and_a_correction_replace_what_was_told_before(
    memory: Memory,
) -> None:
    first = 'The page "Ferry times" says: the first ferry leaves at 9:15 from pier 3.'
    again = 'The page "Ferry times" says: the first ferry leaves at 9:40 from pier 3.'
    museum = "The museum opens at ten on weekdays and at noon on Sundays, tickets are 12 euros."
    correction = "Correction: I got that wrong, the museum opens at eleven on weekdays, not ten."
    await captured(memory, "ann", told(first, 1, FERRY), told(museum, 3))
    await captured(memory, "ann", told(again, 5, FERRY), answered("hi", 7, correction))

    listed = [item.text for item in (await memory.page.listed("ann")).told]
    assert listed == [correction, again]
    _, records = await recalled(memory, "which time did you say the museum opens?")
    assert museum not in records and correction in records


async def test_a_told_record_is_forgotten_and_restored_like_any_item(memory: Memory) -> None:
    text = "I suggested Luigi's on Main Street: their pasta is great and it is open late."
    await captured(memory, "ann", answered("where should we eat tonight?", 1, text))
    (record,) = (await memory.page.listed("ann")).told

    assert (await memory.page.forget("ann", record.id)).told == []
    assert (await recalled(memory, "which restaurant did you suggest?"))[1] == []
    assert [i.text for i in (await memory.page.restore("ann", record.id)).told] == [text]
    assert (await recalled(memory, "which restaurant did you suggest?"))[1] == [text]


async def test_a_told_record_is_kept_in_the_persons_memory_alone(memory: Memory) -> None:
    text = "I told you the ferry leaves at 9:40 from pier 3, with tickets at the kiosk."
    await captured(memory, "ann", told(text, 1, FERRY))
    records = await memory.recaller.recall_with_told(
        "bob", "what did you say about the ferry?", 3, 2
    )
    assert records == ([], [])
    assert (await memory.page.listed("bob")).told == []


@pytest.mark.parametrize(
    ("words", "about_violet", "about_person", "may_recall"),
    [
        ("What time did you say the ferry leaves?", True, False, True),
        ("what was that page about tides?", True, False, True),
        ("which restaurant did you suggest last week?", True, False, True),
        ("where can I read the note you wrote?", True, False, True),
        ("what is my PIN?", False, True, False),
        ("when is my dentist appointment?", False, True, False),
        ("Was ist meine PIN?", False, True, False),
        ("remind me when the museum opens", False, False, True),
        ("thanks!", False, False, False),
    ],
)
def test_questions_about_what_was_told_are_told_apart_from_questions_about_the_person(
    words: str, about_violet: bool, about_person: bool, may_recall: bool
) -> None:
    assert asks_what_was_told(words) is about_violet
    assert about_the_person(words) is about_person
    assert may_recall_told(words) is may_recall


def test_told_sources_are_plain_words() -> None:
    assert FERRY.label() == '"Ferry times" (https://ferry.example/times)'
    assert Source(document="note-ferry.md").label() == "note-ferry.md"
    assert FERRY.key != Source(page="https://ferry.example/other").key
