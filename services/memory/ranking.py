"""Recall ranking: which of one person's memory items answer a message.

Pure and synchronous: the caller loads the person's candidate items with their vectors and
embeds the query; this module only scores. Choices measured on LoCoMo dev (760 questions):

- Lexical BM25 and dense cosine are fused as per-query z-scores, dense counting twice: lexical
  matching beats the small dense model on conversations, fusing both beats either.
- Each signal is read on the item alone and on the item after its previous item, half each: a
  reply often makes sense only next to what it answers.
- The item's date is part of its words, so "in May 2023" can match.
- Items whose speaker the query names come first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from violet.text import QUESTION_STOP_WORDS, Analyzer, Bm25, term_counts

MAX_RECALL = 5

# Words of two letters or more: a lone letter or digit matches too much.
_QUESTIONS = Analyzer(re.compile(r"\w\w+"), QUESTION_STOP_WORDS)


@dataclass(frozen=True)
class MemoryCandidate:
    """One memory item of the person, as ranking needs it."""

    id: str
    text: str
    speaker: str
    created_at: datetime
    vector: NDArray[np.float32]
    previous_text: str | None = None
    # Embedding of contextual_text(previous_text, text); None when there is no previous item.
    context_vector: NDArray[np.float32] | None = None


@dataclass(frozen=True)
class RecallQuery:
    text: str
    vector: NDArray[np.float32]


@dataclass(frozen=True)
class RankedMemory:
    id: str
    score: float


@dataclass(frozen=True)
class RankingWeights:
    """How much each standardised signal counts; the defaults are the measured best."""

    lexical: float = 1.0
    dense: float = 2.0
    # Share of each signal read on the item after its previous item (the rest: the item alone).
    context_share: float = 0.5
    bm25_k1: float = 0.9
    bm25_b: float = 0.4


def contextual_text(previous_text: str | None, text: str) -> str:
    """The text to embed for a candidate's context_vector."""
    return f"{previous_text}\n{text}" if previous_text else text


class RecallIndex:
    """One person's candidates, ready to rank; build once, search many times."""

    def __init__(
        self, candidates: Sequence[MemoryCandidate], weights: RankingWeights | None = None
    ) -> None:
        self._candidates = list(candidates)
        self._weights = weights or RankingWeights()
        k1, b = self._weights.bm25_k1, self._weights.bm25_b
        alone = [_dated(c.text, c.created_at) for c in self._candidates]
        in_context = [
            _dated(contextual_text(c.previous_text, c.text), c.created_at) for c in self._candidates
        ]
        self._lexical = Bm25([_term_counts(text) for text in alone], k1, b)
        self._lexical_in_context = Bm25([_term_counts(text) for text in in_context], k1, b)
        self._vectors = _stack([c.vector for c in self._candidates])
        self._context_vectors = _stack(
            [c.vector if c.context_vector is None else c.context_vector for c in self._candidates]
        )
        self._speaker_words = [
            frozenset(_QUESTIONS.content_words(c.speaker)) for c in self._candidates
        ]

    def search(self, query: RecallQuery, k: int = 3) -> list[RankedMemory]:
        """The k best candidates, best first."""
        if not 1 <= k <= MAX_RECALL:
            raise ValueError(f"k must be between 1 and {MAX_RECALL}, got {k}")
        scores = self.scores(query)
        best = np.argsort(-scores, kind="stable")[:k]
        return [RankedMemory(self._candidates[i].id, float(scores[i])) for i in best]

    def scores(self, query: RecallQuery) -> NDArray[np.float64]:
        """Every candidate's score, in candidate order; higher is better.

        Candidates by a speaker the query names score above all the others.
        """
        if not self._candidates:
            return np.zeros(0)
        query_vector = np.asarray(query.vector, dtype=np.float32)
        if self._vectors.shape[1] != query_vector.shape[0]:
            raise ValueError(
                f"the query vector has {query_vector.shape[0]} dimensions, "
                f"the candidates' vectors {self._vectors.shape[1]}"
            )
        w = self._weights
        alone, in_context = 1.0 - w.context_share, w.context_share
        query_terms = _QUESTIONS.terms(query.text)
        fused = (
            w.lexical * alone * _zscore(self._lexical.scores(query_terms))
            + w.lexical * in_context * _zscore(self._lexical_in_context.scores(query_terms))
            + w.dense * alone * _zscore(self._vectors @ query_vector)
            + w.dense * in_context * _zscore(self._context_vectors @ query_vector)
        )
        return fused + self._speaker_named(query.text) * (np.ptp(fused) + 1.0)

    def _speaker_named(self, text: str) -> NDArray[np.bool_]:
        query_words = set(_QUESTIONS.words(text))
        return np.fromiter(
            (bool(words & query_words) for words in self._speaker_words),
            dtype=bool,
            count=len(self._speaker_words),
        )


def rank_memories(
    query: RecallQuery,
    candidates: Sequence[MemoryCandidate],
    k: int = 3,
    weights: RankingWeights | None = None,
) -> list[RankedMemory]:
    """The k best candidates for the query, best first, with their fused scores."""
    return RecallIndex(candidates, weights).search(query, k)


def _dated(text: str, at: datetime) -> str:
    return f"{text} {at.day} {at:%B %Y}"


@lru_cache(maxsize=50_000)
def _term_counts(text: str) -> dict[str, int]:
    # Items come back at every recall; their terms are counted once. Callers never mutate it.
    return term_counts(_QUESTIONS.terms(text))


def _stack(vectors: Sequence[NDArray[np.float32]]) -> NDArray[np.float32]:
    if not vectors:
        return np.zeros((0, 0), dtype=np.float32)
    return np.vstack(vectors).astype(np.float32, copy=False)


def _zscore(values: NDArray[np.floating]) -> NDArray[np.float64]:
    values = np.asarray(values, dtype=np.float64)
    spread = values.std()
    if spread == 0.0:
        return np.zeros_like(values)
    return (values - values.mean()) / spread
