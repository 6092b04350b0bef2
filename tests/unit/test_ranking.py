"""Recall ranking: what the memory service returns first for a message."""

from __future__ import annotations

import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import numpy as np
import pytest

from memory.ranking import (
    MAX_RECALL,
    MemoryCandidate,
    RecallIndex,
    RecallQuery,
    asks_about_time,
    contextual_text,
    named_dates,
    rank_memories,
    speaks_of_time,
)
from violet.embedder import get_embedder

DIM = 16
START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
FILLER = [
    "I went for a long walk by the river this morning.",
    "Work was busy today, lots of meetings.",
    "We cooked pasta for dinner with friends.",
    "The weather has been rainy all week.",
    "I started reading a new novel about sailors.",
    "My brother called to talk about his new job.",
]


def unit(vector: np.ndarray) -> np.ndarray:
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def random_vector(seed: int) -> np.ndarray:
    return unit(np.random.default_rng(seed).normal(size=DIM))


def candidate(
    id: str,
    text: str,
    *,
    speaker: str = "Ana",
    vector: np.ndarray | None = None,
    at: datetime | None = None,
    previous_text: str | None = None,
) -> MemoryCandidate:
    return MemoryCandidate(
        id=id,
        text=text,
        speaker=speaker,
        created_at=at or START,
        vector=random_vector(zlib.crc32(id.encode())) if vector is None else vector,
        previous_text=previous_text,
    )


def fillers() -> list[MemoryCandidate]:
    return [candidate(f"filler-{i}", text) for i, text in enumerate(FILLER)]


def by_id(index: RecallIndex, query: RecallQuery) -> dict[str, float]:
    scores = index.scores(query)
    return {c.id: float(s) for c, s in zip(index.candidates, scores, strict=True)}


def neutral_query(text: str) -> RecallQuery:
    """A query whose vector is equally far from every candidate: only its words count."""
    return RecallQuery(text, np.zeros(DIM, dtype=np.float32))


def test_an_exact_rare_word_ranks_its_item_first() -> None:
    items = [*fillers(), candidate("cat", "Our cat Miso sleeps on the piano all afternoon.")]

    ranked = rank_memories(neutral_query("What is Miso doing?"), items, k=3)

    assert ranked[0].id == "cat"


def test_a_rare_word_counts_more_than_a_common_one() -> None:
    items = [
        candidate("walks", "The dog loves long walks."),
        candidate("food", "The dog eats too much."),
        candidate("sleep", "The dog sleeps a lot."),
        candidate("vet", "The vet said Pixel needs a vaccine."),
    ]

    ranked = rank_memories(neutral_query("dog Pixel"), items, k=1)

    assert ranked[0].id == "vet"


def test_a_paraphrase_without_shared_words_is_found_by_meaning() -> None:
    meaning = random_vector(7)
    close_to_meaning = unit(meaning + 0.1 * random_vector(8))
    items = [*fillers(), candidate("coffee", "Oat milk in my coffee, always.", vector=meaning)]

    ranked = rank_memories(RecallQuery("How do I take my espresso?", close_to_meaning), items)

    assert ranked[0].id == "coffee"


def test_items_by_a_speaker_the_query_names_come_first() -> None:
    query = neutral_query("What does Ben think about the garden?")
    items = [
        candidate("ana-garden", "The garden needs new roses.", speaker="Ana"),
        candidate("ben-other", "I prefer tea over coffee.", speaker="Ben"),
        *fillers(),
    ]

    ranked = rank_memories(query, items, k=2)

    assert [r.id for r in ranked] == ["ben-other", "ana-garden"]


def test_a_reply_is_found_through_the_item_it_answers() -> None:
    question = "How long have you been married?"
    items = [
        *fillers(),
        candidate("answer", "Five years already, time flies!", previous_text=question),
        candidate("photo", "What a lovely picture of the lake."),
    ]

    ranked = rank_memories(neutral_query("How many years has she been married?"), items, k=1)

    assert ranked[0].id == "answer"


def test_the_context_vector_carries_what_a_reply_answers() -> None:
    about_marriage, about_holidays, reply_alone = (random_vector(seed) for seed in (21, 22, 23))

    def reply(id: str, context: np.ndarray) -> MemoryCandidate:
        return MemoryCandidate(id, "Five years already!", "Ana", START, reply_alone, None, context)

    items = [reply("after-holidays", about_holidays), reply("after-wedding", about_marriage)]

    ranked = rank_memories(RecallQuery("anniversary", about_marriage), items, k=2)

    assert [r.id for r in ranked] == ["after-wedding", "after-holidays"]


def test_an_item_can_be_found_by_the_month_it_was_said() -> None:
    items = [
        candidate(f"day-{i}", text, at=START + timedelta(days=40 * i))
        for i, text in enumerate(FILLER)
    ]
    said_in_june = [c for c in items if c.created_at.month == 6]

    ranked = rank_memories(neutral_query("What happened in June 2024?"), items, k=1)

    assert [r.id for r in ranked] == [said_in_june[0].id]


def test_results_are_at_most_k_best_first() -> None:
    items = fillers()

    ranked = rank_memories(neutral_query("dinner with friends and pasta"), items, k=3)

    assert len(ranked) == 3
    assert ranked[0].id == "filler-2"
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)


def test_fewer_candidates_than_k_returns_them_all() -> None:
    ranked = rank_memories(neutral_query("walk"), fillers()[:2], k=MAX_RECALL)

    assert {r.id for r in ranked} == {"filler-0", "filler-1"}


def test_no_candidates_recall_nothing() -> None:
    assert rank_memories(neutral_query("anything"), [], k=3) == []


@pytest.mark.parametrize("k", [0, MAX_RECALL + 1])
def test_k_outside_one_to_five_is_refused(k: int) -> None:
    with pytest.raises(ValueError, match="between 1 and 5"):
        rank_memories(neutral_query("walk"), fillers(), k=k)


def test_a_query_without_any_known_word_still_ranks_by_meaning() -> None:
    target = random_vector(31)
    items = [*fillers(), candidate("target", "Quiet evening at home.", vector=target)]

    ranked = rank_memories(RecallQuery("???", target), items, k=1)

    assert ranked[0].id == "target"


def test_a_query_vector_of_another_size_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="dimensions"):
        rank_memories(RecallQuery("walk", np.ones(DIM + 1, dtype=np.float32)), fillers())


def test_one_index_serves_many_threads_with_the_same_answers() -> None:
    index = RecallIndex([*fillers(), candidate("cat", "Our cat Miso sleeps on the piano.")])
    queries = [neutral_query(text) for text in ("Miso", "river walk", "pasta", "novel")] * 8
    alone = [index.search(query) for query in queries]

    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(index.search, queries))

    assert together == alone


def test_contextual_text_puts_the_previous_item_first() -> None:
    assert contextual_text("How are you?", "Fine!") == "How are you?\nFine!"
    assert contextual_text(None, "Fine!") == "Fine!"


def test_with_the_real_embedder_a_fact_is_recalled_from_a_question_in_other_words() -> None:
    embedder = get_embedder()
    texts = [
        *FILLER,
        "My cat is called Miso.",
        "I take my coffee with oat milk.",
        "Je travaille comme infirmière à Lyon.",
    ]
    vectors = embedder.embed(texts)
    items = [
        MemoryCandidate(str(i), text, "Ana", START, vectors[i]) for i, text in enumerate(texts)
    ]

    def best(question: str) -> str:
        query = RecallQuery(question, embedder.embed_query(question))
        return texts[int(rank_memories(query, items, k=1)[0].id)]

    assert best("What is the name of my pet?") == "My cat is called Miso."
    assert best("How do I like my coffee?") == "I take my coffee with oat milk."
    assert best("What do I do for a living?") == "Je travaille comme infirmière à Lyon."


@pytest.mark.parametrize(
    ("query", "about_time"),
    [
        ("When did Ana go to the museum?", True),
        ("How long has Ben played the piano?", True),
        ("In which year did they move?", True),
        ("What month was the concert?", True),
        ("What did Ana paint?", False),
        ("Where does Ben live when it rains?", False),
    ],
)
def test_a_question_about_time_is_told_from_others(query: str, about_time: bool) -> None:
    assert asks_about_time(query) is about_time


def test_words_that_place_a_thing_in_time_are_found() -> None:
    assert speaks_of_time("I went to the museum yesterday.")
    assert speaks_of_time("We moved in 2019, three years ago.")
    assert speaks_of_time("The race was last Saturday.")
    assert not speaks_of_time("The museum was full of dinosaurs.")


def test_a_question_about_time_prefers_the_item_that_says_when() -> None:
    vector = random_vector(5)
    undated = candidate("undated", "The museum trip with the kids was great fun.", vector=vector)
    dated = candidate("dated", "I took the kids to the museum yesterday.", vector=vector)
    items = [*fillers(), undated, dated]

    when = rank_memories(RecallQuery("When did Ana go to the museum?", vector), items, k=1)
    what = rank_memories(RecallQuery("Was the museum trip fun for the kids?", vector), items, k=1)

    assert when[0].id == "dated"
    assert what[0].id == "undated"


def test_an_item_gains_when_its_previous_item_means_what_the_query_asks() -> None:
    query_vector = random_vector(8)
    asked = candidate("asked", "Which instrument did you pick up in the end?", vector=query_vector)
    alone = candidate("alone", "Yes, it was the one I wanted.")
    answer = replace(alone, id="answer", previous_id="asked")
    index = RecallIndex([*fillers(), asked, alone, answer])

    scores = by_id(index, RecallQuery("", query_vector))

    assert scores["answer"] > scores["alone"]


def test_an_item_said_on_the_day_that_best_answers_the_query_gains() -> None:
    later = START + timedelta(days=3)
    items = [
        *fillers(),
        candidate("match", "We finally adopted the puppy from the shelter."),
        candidate("same-day", "It was such a long day, I slept early."),
        candidate("other-day", "It was such a long day, I slept early.", at=later),
        *(replace(c, id=f"later-{c.id}", created_at=later) for c in fillers()),
    ]
    index = RecallIndex(items)

    scores = by_id(index, neutral_query("puppy shelter"))

    assert scores["same-day"] > scores["other-day"]


def test_the_follower_context_vector_counts_for_the_item_before_it() -> None:
    query_vector = random_vector(8)
    plain = candidate("plain", "Guess what happened on Sunday!", vector=random_vector(9))
    followed = replace(plain, id="followed", next_id="x", next_context_vector=query_vector)
    index = RecallIndex([*fillers(), plain, followed])

    scores = by_id(index, RecallQuery("", query_vector))

    assert scores["followed"] > scores["plain"]


@pytest.mark.parametrize(
    ("query", "days", "months"),
    [
        ("What did Nate do for Joanna on 25 May, 2022?", [date(2022, 5, 25)], [2022 * 12 + 4]),
        ("What happened on March 3rd 2024?", [date(2024, 3, 3)], []),
        ("What did Jon achieve in January 2022?", [], [2022 * 12]),
        ("What did I say on 31 June, 2023?", [], [2023 * 12 + 5]),  # no such day
        ("What may I have told you?", [], []),
    ],
)
def test_dates_a_query_names_are_read(query: str, days: list[date], months: list[int]) -> None:
    assert named_dates(query) == (days, months)


def test_a_question_naming_a_day_prefers_what_was_said_then() -> None:
    vector = random_vector(9)
    text = "We went to the park with the dogs."
    items = [
        *fillers(),
        candidate("that-day", text, vector=vector, at=datetime(2022, 5, 25, 23, 50, tzinfo=UTC)),
        candidate(
            "past-midnight", text, vector=vector, at=datetime(2022, 5, 26, 0, 20, tzinfo=UTC)
        ),
        candidate("weeks-later", text, vector=vector, at=datetime(2022, 6, 20, 10, tzinfo=UTC)),
    ]
    index = RecallIndex(items)
    scores = by_id(index, RecallQuery("What did Ana do with the dogs on 25 May, 2022?", vector))
    assert min(scores["that-day"], scores["past-midnight"]) > scores["weeks-later"] + 1
    by_month = by_id(index, RecallQuery("What did Ana do with the dogs in June 2022?", vector))
    assert by_month["weeks-later"] > by_month["that-day"]
    # Kept as candidates come and go: the last one takes a removed one's place, date and all.
    index.remove("that-day")
    again = by_id(index, RecallQuery("What did Ana do with the dogs on 25 May, 2022?", vector))
    assert again["past-midnight"] > again["weeks-later"]


def test_a_candidate_without_vectors_yet_is_ranked_on_its_words_as_average_in_meaning() -> None:
    embedder = get_embedder()
    texts = [*FILLER, "A quiet afternoon at home with a book."]
    vectors = embedder.embed(texts)
    others = [
        candidate(f"f{i}", t, vector=v) for i, (t, v) in enumerate(zip(texts, vectors, strict=True))
    ]
    wordy = replace(candidate("new", "My locker number is 4817."), vector=None)
    index = RecallIndex([*others, wordy])

    question = "What is my locker number?"
    ranked = index.search(RecallQuery(question, embedder.embed_query(question)), k=1)
    assert ranked[0].id == "new"
    # Its meaning counts as the others' average: not above one that means the query.
    question = "a quiet afternoon at home"
    ranked = index.search(RecallQuery(question, embedder.embed_query(question)), k=1)
    assert ranked[0].id == f"f{len(FILLER)}"


def test_a_query_without_a_vector_is_ranked_on_its_words_alone() -> None:
    index = RecallIndex(
        [candidate(f"f{i}", text) for i, text in enumerate(FILLER)]
        + [candidate("locker", "My locker number is 4817.")]
    )
    ranked = index.search(RecallQuery("What is my locker number?", None), k=1)
    assert [r.id for r in ranked] == ["locker"]


def test_an_index_of_candidates_without_vectors_still_ranks_and_takes_vectors_later() -> None:
    index = RecallIndex([replace(candidate("a", "I like green tea"), vector=None)])
    index.add(replace(candidate("b", "My cat is called Miso"), vector=None))
    query = RecallQuery("what is my cat called?", random_vector(5))
    assert index.search(query, k=1)[0].id == "b"
    index.replace(candidate("a", "I like green tea", vector=random_vector(5)))
    assert index.search(RecallQuery("something else entirely", random_vector(5)), k=1)[0].id == "a"
