"""One item per fact: duplicates merge, a newer fact on the same subject supersedes an older one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory.merging import Step, plan
from memory.store import FACT, Item
from memory.subjects import Subject, subject_of

START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)


def fact(item_id: str, text: str, days: int) -> Item:
    subject = subject_of(text)
    return Item(
        id=item_id,
        person="ann",
        kind=FACT,
        text=text,
        origin="you",
        quote=text,
        speaker="",
        source_seqs=(days,),
        turn_items=(),
        previous_item=None,
        subject=subject.name if subject else None,
        subject_value=subject.value if subject else None,
        created_at=START + timedelta(days=days),
        updated_at=START + timedelta(days=days),
    )


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("I live in Paris", Subject("home", "paris")),
        ("I moved to Lyon", Subject("home", "lyon")),
        ("The person lives in Lyon.", Subject("home", "lyon")),
        ("My cat is called Miso", Subject("my cat", "miso")),
        ("Remember that my sister's birthday is May 3", Subject("my sister's birthday", "may 3")),
        ("I take my coffee with oat milk", Subject("takes my coffee", "with oat milk")),
        ("I work at Acme", Subject("work", "acme")),
        ("I like green tea", None),
        ("I love painting", None),
    ],
)
def test_the_subject_of_a_fact(text: str, subject: Subject | None) -> None:
    assert subject_of(text) == subject


def test_moving_supersedes_the_old_home() -> None:
    paris, lyon = fact("paris", "I live in Paris", 0), fact("lyon", "I moved to Lyon", 3)
    assert plan([paris, lyon], {}) == [Step("paris", "lyon", merge=False)]


def test_living_in_the_new_city_supersedes_the_old_one() -> None:
    paris, lyon = fact("paris", "I live in Paris", 0), fact("lyon", "I live in Lyon", 3)
    assert plan([lyon, paris], {}) == [Step("paris", "lyon", merge=False)]


def test_the_same_fact_said_twice_merges_into_the_newest() -> None:
    first, again = fact("a", "My cat is called Miso", 0), fact("b", "my cat is called  Miso.", 9)
    assert plan([first, again], {}) == [Step("a", "b", merge=True)]


def test_a_move_then_the_same_city_again_merges_and_supersedes() -> None:
    facts = [
        fact("paris", "I live in Paris", 0),
        fact("moved", "I moved to Lyon", 2),
        fact("lyon", "I live in Lyon", 5),
    ]
    assert sorted(plan(facts, {}), key=lambda step: step.older) == [
        Step("moved", "lyon", merge=True),
        Step("paris", "lyon", merge=False),
    ]


def test_likes_add_up_and_never_supersede() -> None:
    facts = [fact("tea", "I like green tea", 0), fact("cats", "I like cats", 1)]
    assert plan(facts, {}) == []


def test_facts_whose_vectors_say_the_same_merge() -> None:
    facts = [fact("like", "I like green tea", 0), fact("love", "I love green tea", 1)]
    assert plan(facts, {"like": {"love"}, "love": {"like"}}) == [Step("like", "love", merge=True)]


def test_alike_vectors_do_not_join_facts_a_subject_tells_apart() -> None:
    facts = [fact("cat", "My cat is called Miso", 0), fact("dog", "My dog is called Miso", 1)]
    assert plan(facts, {"cat": {"dog"}, "dog": {"cat"}}) == []
