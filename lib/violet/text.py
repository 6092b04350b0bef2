"""Text analysis the services share: words, stop words, stems, content words and BM25.

Each use reads words its own way (what counts as a word, which words carry no meaning), so the
stop words are one core of English function words with a named list per purpose on top; the
stemmer and the BM25 scoring are one for all.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import Stemmer
from numpy.typing import NDArray


def _word_set(listed: str) -> frozenset[str]:
    return frozenset(listed.split())


# Articles, pronouns, auxiliaries, prepositions, conjunctions and question words that every
# purpose below skips.
FUNCTION_WORDS = _word_set(
    """
    the an this that these those it its we our you your me my
    am is are was were be been do does did have has had
    will would shall should can could might must not no
    about at by for from in of on to with and but or so as then there here
    what when where which who whom whose why how
    """
)

# A request to Violet: polite fillers and wanting words say nothing about its topic.
REQUEST_STOP_WORDS = FUNCTION_WORDS | _word_set(
    """
    a i he she they them their being if into over some any all may
    please want like need just also too very yes ok okay
    """
)

# A question about what the person said: every function word, so "what did she say about ..."
# matches on its content words only. "may" stays: it is also a month.
QUESTION_STOP_WORDS = FUNCTION_WORDS | _word_set(
    """
    each every any some all both such own same other another
    he him his she her hers ours they them their theirs yours mine
    myself yourself himself herself itself ourselves themselves yourselves
    being having doing nor don doesn didn isn aren wasn weren hasn haven hadn
    won wouldn couldn shouldn ll ve re
    above after against along among around before behind below beneath beside between
    beyond down during except inside into near off onto out outside over
    past since through throughout till toward towards under until up upon us within without
    yet because if than while though although whether
    just also very too again further once only now more most
    """
)

# A statement about the person, compared with its quote: who it is about ("the user", "the
# person") is no part of what it says.
STATEMENT_STOP_WORDS = FUNCTION_WORDS | _word_set(
    """
    a i i'm he she they their may than into over after before up down out off again once
    just very too also person person's user user's
    """
)

# A message the offline model reads: asking words ("tell me", "do you know") are no part of
# what is asked.
PROMPT_STOP_WORDS = FUNCTION_WORDS | _word_set("a i if may mine yours than yes please tell know")

_stemmers = threading.local()


def stem(words: Iterable[str]) -> list[str]:
    """The English (Snowball) stems of the words, in order."""
    # A Stemmer keeps state between calls and must not be shared between threads.
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        stemmer = _stemmers.english = Stemmer.Stemmer("english")
    return stemmer.stemWords(list(words))


@dataclass(frozen=True)
class Analyzer:
    """One way of reading text: what a word is, and which words carry no meaning."""

    word: re.Pattern[str]
    stop_words: frozenset[str]

    def words(self, text: str) -> list[str]:
        """Every word of the text, lower-cased, in order."""
        return self.word.findall(text.lower())

    def content_words(self, text: str) -> list[str]:
        return [word for word in self.words(text) if word not in self.stop_words]

    def terms(self, text: str) -> list[str]:
        """The stems of the content words, in order."""
        return stem(self.content_words(text))


class Bm25:
    """Okapi BM25 with Lucene's idf over a fixed set of documents, each given as its term counts.

    Scored from the query's terms alone, so the documents' terms can be counted once and kept:
    bm25s gives the same scores (to 1e-6 on LoCoMo) but first builds a sparse index over every term
    of every document, again whenever a person's memory changes: 22 ms for 680 items, against 6 ms
    here with the items' terms cached.
    """

    def __init__(self, documents: Sequence[Mapping[str, int]], k1: float, b: float) -> None:
        self._counts = documents
        self._k1 = k1
        lengths = np.array([sum(counts.values()) for counts in documents], dtype=np.float64)
        # At least one term on average: a handful of near-empty documents is not stretched.
        average = max(float(lengths.mean()), 1.0) if len(lengths) else 1.0
        self._length_norm = k1 * (1.0 - b + b * lengths / average)

    def scores(self, query_terms: Iterable[str]) -> NDArray[np.float64]:
        """Each document's score, in document order: a term given twice counts twice."""
        size = len(self._counts)
        scores = np.zeros(size)
        for term in query_terms:
            frequencies = np.fromiter(
                (counts.get(term, 0) for counts in self._counts), dtype=np.float64, count=size
            )
            documents = np.count_nonzero(frequencies)
            if documents == 0:
                continue
            idf = math.log(1.0 + (size - documents + 0.5) / (documents + 0.5))
            scores += idf * frequencies * (self._k1 + 1.0) / (frequencies + self._length_norm)
        return scores


def term_counts(terms: Iterable[str]) -> dict[str, int]:
    return dict(Counter(terms))
