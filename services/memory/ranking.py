"""Recall ranking: which of one person's memory items answer a message.

Pure and synchronous: the caller loads the person's candidate items with their vectors and
embeds the query; this module only scores. Choices measured on LoCoMo dev (760 questions):

- Lexical BM25 and dense cosine are fused as per-query z-scores: lexical matching beats the
  small dense model on conversations, fusing both beats either.
- Each signal is read on the item alone and on the item after its previous item: a reply often
  makes sense only next to what it answers. A first read weighs them by hand (dense twice, the
  context four times as much as the item alone).
- The dense signal is also read on the item before its follower (the follower's context vector,
  stored already, so nothing more is embedded): the answer to a question often comes next.
- Each signal of the item, of its previous item, of its follower and of the item before the
  previous one counts with its own weight, fitted (a listwise logistic loss) on the tuning
  conversations: the words that match are often said a turn or two before the answer, and a
  previous item that matches alone, not in context, says little.
- Items said on the day whose best item answers the query gain: a talk stays on its topics for
  the day, and a question's evidence often lies beside what matches it best.
- The item's date is part of its words, so "in May 2023" can match; a question about time
  ("when did ...", "how long ...") favours items that speak of time ("yesterday", "last week").
- A question naming a date ("on 25 May, 2022", "in January 2022") favours items said then.
- Items whose speaker the query names come first.
- These choices were tuned on four LoCoMo dev conversations, listed in `tuned_on.json`
  (`memory.tuning`); docs/memory.md gives the figures cross-validated by conversation.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from violet.text import MONTHS, QUESTION_STOP_WORDS, WEEKDAYS, Analyzer, Bm25, term_counts

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
    # None until the item's vectors are stored: it is then ranked on its words, its meaning
    # counting as the others' average.
    vector: NDArray[np.float32] | None
    previous_text: str | None = None
    # The item read after its previous item (`memory.context`); None when there is none.
    context_vector: NDArray[np.float32] | None = None
    # The items said just before and just after this one, among the candidates.
    previous_id: str | None = None
    next_id: str | None = None
    # The follower's context_vector: this item read before its follower.
    next_context_vector: NDArray[np.float32] | None = None


@dataclass(frozen=True)
class RecallQuery:
    text: str
    # None when no vector could be made in time: the query is ranked on its words alone.
    vector: NDArray[np.float32] | None


@dataclass(frozen=True)
class RankedMemory:
    id: str
    score: float


# The five signals, each standardised per query (a z-score): BM25 on the item alone and on the
# item after its previous item, dense cosine on the same two, and dense cosine on the item before
# its follower (the follower's context vector).
Signals = tuple[float, float, float, float, float]


@dataclass(frozen=True)
class RankingWeights:
    """How much each signal counts; the defaults are the measured best.

    A first read weighs the signals by hand (lexical and dense, alone and in context) and adds
    shares of the neighbours' reads: its best on each day says which days speak of the query.
    The score itself weighs each signal of the item, of its previous item, of its follower and
    of the item before the previous one apart (weights fitted on LoCoMo dev conversations), and
    adds the day's best, time and date.
    """

    lexical: float = 1.0
    dense: float = 2.0
    # Share of each signal read on the item after its previous item (the rest: the item alone).
    context_share: float = 0.8
    # The dense signal read on the item before its follower, on top of the two above.
    dense_before_next: float = 0.5
    # Share of the previous item's and of the follower's first read an item adds to its own.
    from_previous: float = 0.2
    from_next: float = 0.1
    # Fitted with context vectors derived from the turns' own vectors (`memory.context`).
    own: Signals = (-0.112, 0.446, -0.159, -0.190, 0.191)
    previous: Signals = (-0.340, 0.308, 0.407, -0.410, 1.038)
    following: Signals = (-0.096, 0.149, 0.094, 0.413, 0.146)
    second_previous: Signals = (-0.117, 0.061, 0.172, 0.198, 0.187)
    # Times the z-score, among the person's days, of the best first read said on the item's day.
    same_day: float = 0.772
    # Added to items that speak of time when the query asks about time.
    time: float = 2.93
    # Added to items said on a date the query names, a day either side (a talk runs past
    # midnight); `month_share` of it to items said in a month it names without a day.
    date: float = 4.548
    month_share: float = 0.5
    bm25_k1: float = 0.9
    bm25_b: float = 0.4

    def matrix(self) -> NDArray[np.float64]:
        """Each signal's weight (a row per signal) for the item itself, its previous item, its
        follower, the item before the previous one, and in the first read (a column each)."""
        alone, in_context = 1.0 - self.context_share, self.context_share
        first_read = (
            self.lexical * alone,
            self.lexical * in_context,
            self.dense * alone,
            self.dense * in_context,
            self.dense_before_next,
        )
        columns = (self.own, self.previous, self.following, self.second_previous, first_read)
        return np.array(columns).T


def contextual_text(previous_text: str | None, text: str) -> str:
    """A candidate read after its previous item: its words in context (BM25), and the passage
    its context vector stands for (`memory.context`)."""
    return f"{previous_text}\n{text}" if previous_text else text


class RecallIndex:
    """One person's candidates, ready to rank. Candidates can be added, replaced and removed as
    the person's memory changes: the index then scores as one built anew on the same candidates
    (in another order: a removed candidate's place goes to the last one)."""

    def __init__(
        self, candidates: Sequence[MemoryCandidate] = (), weights: RankingWeights | None = None
    ) -> None:
        self._weights = weights or RankingWeights()
        self._weighing = self._weights.matrix()
        k1, b = self._weights.bm25_k1, self._weights.bm25_b
        self._candidates: list[MemoryCandidate] = []
        self._position: dict[str, int] = {}
        self._lexical = Bm25([], k1, b)
        self._lexical_in_context = Bm25([], k1, b)
        self._vectors = _Rows()
        self._context_vectors = _Rows()
        self._next_context_vectors = _Rows()
        self._speakers = _Speakers()
        self._neighbours = _Neighbours()
        self._dates = _Rows()
        self._days = _Days()
        for candidate in candidates:
            self.add(candidate)

    def __len__(self) -> int:
        return len(self._candidates)

    def __contains__(self, candidate_id: object) -> bool:
        return candidate_id in self._position

    @property
    def candidates(self) -> Sequence[MemoryCandidate]:
        """The candidates in score order (the order of `scores`)."""
        return self._candidates

    def get(self, candidate_id: str) -> MemoryCandidate | None:
        position = self._position.get(candidate_id)
        return None if position is None else self._candidates[position]

    def add(self, candidate: MemoryCandidate) -> None:
        if candidate.id in self._position:
            raise ValueError(f"candidate {candidate.id} is in the index already")
        self._position[candidate.id] = len(self._candidates)
        self._candidates.append(candidate)
        alone, in_context = _documents(candidate)
        self._lexical.add(alone)
        self._lexical_in_context.add(in_context)
        self._vectors.append(candidate.vector)
        self._context_vectors.append(_context_vector(candidate))
        self._next_context_vectors.append(_next_context_vector(candidate))
        self._speakers.append(candidate.speaker)
        self._neighbours.append(candidate)
        self._dates.append(_said_on(candidate))
        self._days.append(candidate.created_at)

    def replace(self, candidate: MemoryCandidate) -> None:
        """Puts the candidate in place of the one with its id."""
        position = self._position[candidate.id]
        self._candidates[position] = candidate
        alone, in_context = _documents(candidate)
        self._lexical.replace(position, alone)
        self._lexical_in_context.replace(position, in_context)
        self._vectors.set(position, candidate.vector)
        self._context_vectors.set(position, _context_vector(candidate))
        self._next_context_vectors.set(position, _next_context_vector(candidate))
        self._speakers.set(position, candidate.speaker)
        self._neighbours.set(position, candidate)
        self._dates.set(position, _said_on(candidate))
        self._days.set(position, candidate.created_at)

    def put(self, candidate: MemoryCandidate) -> None:
        """Adds the candidate, or replaces the one with its id."""
        if candidate.id in self._position:
            self.replace(candidate)
        else:
            self.add(candidate)

    def remove(self, candidate_id: str) -> None:
        """Takes the candidate out, if it is in; the last candidate takes its place."""
        position = self._position.pop(candidate_id, None)
        if position is None:
            return
        last = self._candidates.pop()
        if position < len(self._candidates):
            self._candidates[position] = last
            self._position[last.id] = position
        self._lexical.remove(position)
        self._lexical_in_context.remove(position)
        self._vectors.remove(position)
        self._context_vectors.remove(position)
        self._next_context_vectors.remove(position)
        self._speakers.remove(position)
        self._neighbours.remove(position)
        self._dates.remove(position)
        self._days.remove(position)

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
        w = self._weights
        query_terms = _QUESTIONS.terms(query.text)
        signals = np.zeros((len(self._candidates), 5))
        signals[:, 0] = _zscore(self._lexical.scores(query_terms))
        signals[:, 1] = _zscore(self._lexical_in_context.scores(query_terms))
        if query.vector is not None:
            words = signals[:, (0, 1, 1)]  # what stands in for a meaning not read yet
            signals[:, 2:] = self._dense_signals(np.asarray(query.vector, dtype=np.float32), words)
        # One product weighs them all; the neighbours' columns are then read at their places.
        weighed = signals @ self._weighing
        previous, following = self._neighbours.positions()
        first = weighed[:, 4]
        first = first + w.from_previous * first[previous] + w.from_next * first[following]
        fused = (
            weighed[:, 0]
            + weighed[previous, 1]
            + weighed[following, 2]
            + weighed[previous[previous], 3]
            + w.same_day * self._days.best(first)
        )
        if asks_about_time(query.text):
            fused = fused + w.time * self._neighbours.timed
        days, months = named_dates(query.text)
        if days or months:
            fused = fused + w.date * self._said_then(days, months)
        named = self._speakers.named(frozenset(_QUESTIONS.words(query.text)))
        return fused + named * (np.ptp(fused) + 1.0)

    def _dense_signals(
        self, query_vector: NDArray[np.float32], words: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """The three dense signals, one column each, standardised over the candidates whose
        vectors are stored. A candidate without them yet takes its words' signal in each one's
        place (`words`, a column each): its words are all that is read of it so far."""
        dense = words.copy()
        if self._vectors.width == 0:
            return dense  # no candidate has vectors yet
        if self._vectors.width != query_vector.shape[0]:
            raise ValueError(
                f"the query vector has {query_vector.shape[0]} dimensions, "
                f"the candidates' vectors {self._vectors.width}"
            )
        rows = (self._vectors, self._context_vectors, self._next_context_vectors)
        for column, matrix in enumerate(rows):
            given = matrix.given
            if given.all():  # as a memory mostly is: no copy of its rows
                dense[:, column] = _zscore(_cosines(matrix.rows, query_vector))
            elif given.any():
                dense[given, column] = _zscore(_cosines(matrix.rows[given], query_vector))
        return dense

    def _said_then(self, days: Sequence[date], months: Sequence[int]) -> NDArray[np.float64]:
        """1 for each candidate said within a day of one of `days`; else, when no day is
        named, the month share for one said in one of `months` (year * 12 + month - 1)."""
        said = self._dates.rows
        if days:
            apart = np.abs(said[:, :1] - np.array([[d.toordinal() for d in days]]))
            return (apart <= 1).any(axis=1).astype(np.float64)
        in_month = np.isin(said[:, 1], np.array(months, dtype=np.float32))
        return self._weights.month_share * in_month.astype(np.float64)


def rank_memories(
    query: RecallQuery,
    candidates: Sequence[MemoryCandidate],
    k: int = 3,
    weights: RankingWeights | None = None,
) -> list[RankedMemory]:
    """The k best candidates for the query, best first, with their fused scores."""
    return RecallIndex(candidates, weights).search(query, k)


_TIME_QUESTION = re.compile(
    r"^\W*(when|how long|(in )?(what|which) (year|month|date|day|time))\b", re.IGNORECASE
)
# "may" is left out of the months: it is far more often the verb.
_TIME_WORDS = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|ago|last|next|this (week|weekend|month|year|morning|"
    r"evening)|weekend|recently|since|soon|weeks?|months?|years?|"
    + "|".join((*WEEKDAYS, *(month for month in MONTHS if month != "may")))
    + r"|(19|20)\d\d)\b",
    re.IGNORECASE,
)


_MONTH = "|".join(MONTHS)
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? ({_MONTH}),? (\d{{4}})\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH}) (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b", re.I)
_MONTH_YEAR = re.compile(rf"\b({_MONTH}),? (\d{{4}})\b", re.I)


def named_dates(query: str) -> tuple[list[date], list[int]]:
    """The days ("25 May, 2022", "May 25 2022") and the months ("January 2022", as year * 12 +
    month - 1) the query names."""
    found = _DAY_MONTH_YEAR.findall(query)
    found += [(d, m, y) for m, d, y in _MONTH_DAY_YEAR.findall(query)]
    days = []
    for day, month, year in found:
        with contextlib.suppress(ValueError):  # "31 June" names no day
            days.append(date(int(year), MONTHS.index(month.lower()) + 1, int(day)))
    months = [int(y) * 12 + MONTHS.index(m.lower()) for m, y in _MONTH_YEAR.findall(query)]
    return days, months


def asks_about_time(query: str) -> bool:
    """Whether the query asks when something happened or how long it lasted."""
    return _TIME_QUESTION.search(query) is not None


def speaks_of_time(text: str) -> bool:
    """Whether the text places something in time ("yesterday", "last week", "in 2022")."""
    return _TIME_WORDS.search(text) is not None


class _Neighbours:
    """Per candidate: its previous item and its follower, and whether it speaks of time, kept as
    candidates come and go. Every id the index meets gets a lasting code, and each code the
    position of its candidate (-1 when it is none), so a recall finds the neighbours' positions
    with a few array reads, however many items changed since the last one."""

    def __init__(self) -> None:
        self._code_of: dict[str, int] = {}
        self._position_of_code = np.full(16, -1, dtype=np.intp)
        # Per position: the candidate's own code, its previous item's and its follower's (-1:
        # none).
        self._codes = np.full((16, 3), -1, dtype=np.intp)
        self._timed = np.zeros(16, dtype=np.bool_)
        self._size = 0

    @property
    def timed(self) -> NDArray[np.bool_]:
        return self._timed[: self._size]

    def positions(self) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """The positions of each candidate's previous item and follower; its own where that one
        is not a candidate."""
        codes = self._codes[: self._size]
        own = np.arange(self._size)

        def placed(neighbour: NDArray[np.intp]) -> NDArray[np.intp]:
            at = np.where(neighbour >= 0, self._position_of_code[np.maximum(neighbour, 0)], -1)
            return np.where(at >= 0, at, own)

        return placed(codes[:, 1]), placed(codes[:, 2])

    def append(self, candidate: MemoryCandidate) -> None:
        if self._size == len(self._codes):
            self._codes = np.concatenate([self._codes, np.full_like(self._codes, -1)])
            self._timed = np.concatenate([self._timed, np.zeros_like(self._timed)])
        self._size += 1
        self.set(self._size - 1, candidate)

    def set(self, position: int, candidate: MemoryCandidate) -> None:
        own = self._code(candidate.id)
        self._codes[position] = (
            own,
            self._code(candidate.previous_id),
            self._code(candidate.next_id),
        )
        self._position_of_code[own] = position
        self._timed[position] = _speaks_of_time(candidate.text)

    def remove(self, position: int) -> None:
        """The last candidate takes the removed one's place."""
        self._position_of_code[self._codes[position, 0]] = -1
        self._size -= 1
        if position < self._size:
            self._codes[position] = self._codes[self._size]
            self._timed[position] = self._timed[self._size]
            self._position_of_code[self._codes[position, 0]] = position

    def _code(self, item_id: str | None) -> int:
        if not item_id:
            return -1
        code = self._code_of.get(item_id)
        if code is None:
            code = self._code_of[item_id] = len(self._code_of)
            if code == len(self._position_of_code):
                grown = np.full_like(self._position_of_code, -1)
                self._position_of_code = np.concatenate([self._position_of_code, grown])
        return code


@lru_cache(maxsize=50_000)
def _speaks_of_time(text: str) -> bool:
    return speaks_of_time(text)


def _dated(text: str, at: datetime) -> str:
    return f"{text} {at.day} {at:%B %Y}"


@lru_cache(maxsize=50_000)
def _term_counts(text: str) -> dict[str, int]:
    # Items come back at every recall; their terms are counted once. Callers never mutate it.
    return term_counts(_QUESTIONS.terms(text))


def _documents(candidate: MemoryCandidate) -> tuple[dict[str, int], dict[str, int]]:
    """The candidate's terms, alone and read after its previous item."""
    alone = _dated(candidate.text, candidate.created_at)
    in_context = _dated(
        contextual_text(candidate.previous_text, candidate.text), candidate.created_at
    )
    return _term_counts(alone), _term_counts(in_context)


def _said_on(candidate: MemoryCandidate) -> NDArray[np.float32]:
    """The candidate's day (its ordinal) and month (year * 12 + month - 1); both are exact in
    float32, which holds integers up to 2**24."""
    at = candidate.created_at
    return np.array([at.toordinal(), at.year * 12 + at.month - 1], dtype=np.float32)


def _context_vector(candidate: MemoryCandidate) -> NDArray[np.float32] | None:
    return candidate.vector if candidate.context_vector is None else candidate.context_vector


def _next_context_vector(candidate: MemoryCandidate) -> NDArray[np.float32] | None:
    if candidate.next_context_vector is None:
        return _context_vector(candidate)
    return candidate.next_context_vector


class _Rows:
    """A matrix of one row per candidate that grows by doubling its capacity, so adding a row
    seldom copies the others. A candidate may have no row yet (None): its row is zeros, and
    `given` says so. The width is that of the first row given."""

    def __init__(self) -> None:
        self._data = np.zeros((0, 0), dtype=np.float32)
        self._given = np.zeros(0, dtype=np.bool_)
        self._size = 0

    @property
    def rows(self) -> NDArray[np.float32]:
        return self._data[: self._size]

    @property
    def given(self) -> NDArray[np.bool_]:
        return self._given[: self._size]

    @property
    def width(self) -> int:
        return int(self._data.shape[1])

    def append(self, row: NDArray[np.float32] | None) -> None:
        if self._size == len(self._data):
            self._resize(max(16, 2 * len(self._data)), self.width)
        self._size += 1
        self.set(self._size - 1, row)

    def set(self, position: int, row: NDArray[np.float32] | None) -> None:
        if row is None:
            self._data[position] = 0.0
            self._given[position] = False
            return
        if self.width == 0:
            self._resize(len(self._data), len(row))
        self._data[position] = row
        self._given[position] = True

    def remove(self, position: int) -> None:
        """The last row takes the removed one's place."""
        self._size -= 1
        if position < self._size:
            self._data[position] = self._data[self._size]
            self._given[position] = self._given[self._size]

    def _resize(self, capacity: int, width: int) -> None:
        data = np.zeros((capacity, width), dtype=np.float32)
        given = np.zeros(capacity, dtype=np.bool_)
        if self._size and self.width == width:
            data[: self._size] = self._data[: self._size]
        given[: self._size] = self._given[: self._size]
        self._data, self._given = data, given


class _Speakers:
    """Each candidate's speaker, as a code into the few distinct speakers' content words."""

    def __init__(self) -> None:
        self._code_of: dict[str, int] = {}
        self._words: list[frozenset[str]] = []
        self._codes = np.zeros(16, dtype=np.int32)
        self._size = 0

    def append(self, speaker: str) -> None:
        if self._size == len(self._codes):
            self._codes = np.concatenate([self._codes, np.zeros_like(self._codes)])
        self._codes[self._size] = self._code(speaker)
        self._size += 1

    def set(self, position: int, speaker: str) -> None:
        self._codes[position] = self._code(speaker)

    def remove(self, position: int) -> None:
        self._size -= 1
        self._codes[position] = self._codes[self._size]

    def named(self, query_words: frozenset[str]) -> NDArray[np.bool_]:
        """Whether the query names each candidate's speaker."""
        named = [code for code, words in enumerate(self._words) if words & query_words]
        return np.isin(self._codes[: self._size], named)

    def _code(self, speaker: str) -> int:
        code = self._code_of.get(speaker)
        if code is None:
            code = self._code_of[speaker] = len(self._words)
            self._words.append(frozenset(_QUESTIONS.content_words(speaker)))
        return code


class _Days:
    """The day each candidate was said, as a code per day (its UTC date)."""

    def __init__(self) -> None:
        self._code_of: dict[date, int] = {}
        self._codes = np.zeros(16, dtype=np.intp)
        self._size = 0

    def append(self, at: datetime) -> None:
        if self._size == len(self._codes):
            self._codes = np.concatenate([self._codes, np.zeros_like(self._codes)])
        self._codes[self._size] = self._code(at)
        self._size += 1

    def set(self, position: int, at: datetime) -> None:
        self._codes[position] = self._code(at)

    def remove(self, position: int) -> None:
        self._size -= 1
        self._codes[position] = self._codes[self._size]

    def best(self, scores: NDArray[np.float64]) -> NDArray[np.float64]:
        """Per candidate, the z-score among the candidates' days of the best score said on its
        day."""
        codes = self._codes[: self._size]
        best = np.full(len(self._code_of), -np.inf)
        np.maximum.at(best, codes, scores)
        said = np.isfinite(best)
        best[said] = _zscore(best[said])
        return best[codes]

    def _code(self, at: datetime) -> int:
        return self._code_of.setdefault(at.date(), len(self._code_of))


def _cosines(rows: NDArray[np.float32], vector: NDArray[np.float32]) -> NDArray[np.float32]:
    # einsum's own loop, not BLAS: on a busy 2-core machine OpenBLAS's threaded product waits
    # for a second core, 15 to 22 ms for 10,000 rows against 3 to 5 ms.
    return np.einsum("ij,j->i", rows, vector)


def _zscore(values: NDArray[np.floating]) -> NDArray[np.float64]:
    values = np.asarray(values, dtype=np.float64)
    spread = values.std()
    if spread == 0.0:
        return np.zeros_like(values)
    return (values - values.mean()) / spread
