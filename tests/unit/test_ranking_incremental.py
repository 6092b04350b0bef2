"""An index kept up to date candidate by candidate ranks exactly as one built anew."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memory.ranking import MemoryCandidate, RecallIndex, RecallQuery
from violet.text import Bm25

DIM = 8
START = datetime(2024, 1, 1, tzinfo=UTC)
WORDS = [
    "cat",
    "dog",
    "coffee",
    "tea",
    "paris",
    "lyon",
    "piano",
    "river",
    "walk",
    "may",
    "june",
    "yesterday",
    "book",
    "sister",
    "job",
]
SPEAKERS = ["Ana", "Ben", "", "Ana Maria"]
QUERIES = [
    "What does Ana say about coffee?",
    "dog walk by the river",
    "Ben in May",
    "job",
    "When did Ben walk the dog?",
]


def unit(vector: np.ndarray) -> np.ndarray:
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def a_candidate(rng: np.random.Generator, candidate_id: str) -> MemoryCandidate:
    def words() -> str:
        return " ".join(rng.choice(WORDS, size=int(rng.integers(1, 7))))

    def neighbour() -> str | None:
        # Some name a candidate that may come, may leave, or never is one.
        return f"item-{int(rng.integers(0, 60))}" if rng.random() < 0.6 else None

    return MemoryCandidate(
        id=candidate_id,
        text=words(),
        speaker=str(rng.choice(SPEAKERS)),
        created_at=START + timedelta(days=int(rng.integers(0, 90))),
        vector=unit(rng.normal(size=DIM)),
        previous_text=words() if rng.random() < 0.5 else None,
        context_vector=unit(rng.normal(size=DIM)) if rng.random() < 0.5 else None,
        previous_id=neighbour(),
        next_id=neighbour(),
        next_context_vector=unit(rng.normal(size=DIM)) if rng.random() < 0.5 else None,
    )


def scores_by_id(index: RecallIndex, query: RecallQuery) -> dict[str, float]:
    scores = index.scores(query)
    return {c.id: float(score) for c, score in zip(index.candidates, scores, strict=True)}


def assert_ranks_as_built_anew(index: RecallIndex, rng: np.random.Generator) -> None:
    fresh = RecallIndex(sorted(index.candidates, key=lambda c: c.id))
    for text in QUERIES:
        query = RecallQuery(text, unit(rng.normal(size=DIM)))
        kept, anew = scores_by_id(index, query), scores_by_id(fresh, query)
        assert kept.keys() == anew.keys()
        ids = sorted(anew)
        # Two matrices' float32 dot products may round apart in the last place.
        np.testing.assert_allclose(
            [kept[i] for i in ids], [anew[i] for i in ids], rtol=1e-6, atol=1e-6
        )


@pytest.mark.parametrize("seed", range(12))
def test_random_adds_replacements_and_removals_score_as_a_fresh_build(seed: int) -> None:
    rng = np.random.default_rng(seed)
    index = RecallIndex()
    made = 0
    for step in range(150):
        ids = [c.id for c in index.candidates]
        action = rng.random()
        if not ids or action < 0.5:
            index.add(a_candidate(rng, f"item-{made}"))
            made += 1
        elif action < 0.75:
            index.replace(a_candidate(rng, str(rng.choice(ids))))
        else:
            index.remove(str(rng.choice(ids)))
        if step % 10 == 0 and len(index):
            assert_ranks_as_built_anew(index, rng)
    if len(index):
        assert_ranks_as_built_anew(index, rng)


def test_an_index_emptied_and_filled_again_scores_as_a_fresh_build() -> None:
    rng = np.random.default_rng(99)
    index = RecallIndex([a_candidate(rng, f"old-{i}") for i in range(40)])
    for candidate in list(index.candidates):
        index.remove(candidate.id)
    assert len(index) == 0
    assert index.scores(RecallQuery("cat", unit(rng.normal(size=DIM)))).shape == (0,)
    for i in range(5):
        index.add(a_candidate(rng, f"new-{i}"))
    assert_ranks_as_built_anew(index, rng)


def test_an_id_is_indexed_once() -> None:
    rng = np.random.default_rng(1)
    index = RecallIndex([a_candidate(rng, "same")])
    with pytest.raises(ValueError, match="already"):
        index.add(a_candidate(rng, "same"))
    index.put(a_candidate(rng, "same"))
    index.remove("not-there")
    assert [c.id for c in index.candidates] == ["same"]


@pytest.mark.parametrize("seed", range(6))
def test_bm25_kept_up_to_date_scores_exactly_as_one_built_anew(seed: int) -> None:
    rng = np.random.default_rng(seed)

    def document() -> dict[str, int]:
        terms = rng.choice(WORDS, size=int(rng.integers(0, 6)))
        return {str(t): int(n) for t, n in zip(*np.unique(terms, return_counts=True), strict=True)}

    documents: list[dict[str, int]] = []
    kept = Bm25([], 0.9, 0.4)
    for _ in range(120):
        action = rng.random()
        if not documents or action < 0.5:
            documents.append(document())
            kept.add(documents[-1])
        elif action < 0.75:
            at = int(rng.integers(len(documents)))
            documents[at] = document()
            kept.replace(at, documents[at])
        else:
            at = int(rng.integers(len(documents)))
            documents[at] = documents[-1]
            documents.pop()
            kept.remove(at)
        query = [str(t) for t in rng.choice(WORDS, size=3)]
        assert len(kept) == len(documents)
        np.testing.assert_array_equal(kept.scores(query), Bm25(documents, 0.9, 0.4).scores(query))
