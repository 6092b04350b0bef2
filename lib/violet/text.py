"""Text analysis the services share: words, stop words, stems, content words, BM25, and the
names of days and months.

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

# The English names of the days and of the months, in order, lower case.
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)

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
    """Okapi BM25 with Lucene's idf over documents given as their term counts.

    Scored from the query's terms alone through an inverted index (each term's documents and
    counts), so the documents' terms are counted once and kept. Documents can be added, replaced
    and removed, and the statistics (document frequencies, lengths, their average) follow, so an
    index kept up to date scores exactly as one built anew on the same documents. bm25s gives the
    same scores (to 1e-6 on LoCoMo) but builds a sparse index over every term again whenever a
    person's memory changes.
    """

    def __init__(self, documents: Sequence[Mapping[str, int]], k1: float, b: float) -> None:
        self._k1 = k1
        self._b = b
        self._counts: list[Mapping[str, int]] = []
        # term -> {document index: count}
        self._postings: dict[str, dict[int, int]] = {}
        self._lengths = np.zeros(max(len(documents), 16), dtype=np.float64)
        self._total_length = 0
        for document in documents:
            self.add(document)

    def __len__(self) -> int:
        return len(self._counts)

    def add(self, document: Mapping[str, int]) -> None:
        """Appends a document: it takes the index `len(self)`."""
        index = len(self._counts)
        if index == len(self._lengths):
            self._lengths = np.concatenate([self._lengths, np.zeros(len(self._lengths))])
        self._counts.append(document)
        self._enter(index, document)

    def replace(self, index: int, document: Mapping[str, int]) -> None:
        self._leave(index, self._counts[index])
        self._counts[index] = document
        self._enter(index, document)

    def remove(self, index: int) -> None:
        """Removes a document; the last one takes its index (callers keep their order alike)."""
        last = len(self._counts) - 1
        self._leave(index, self._counts[index])
        if index != last:
            moved = self._counts[last]
            for term in moved:
                if moved[term]:
                    postings = self._postings[term]
                    postings[index] = postings.pop(last)
            self._counts[index] = moved
            self._lengths[index] = self._lengths[last]
        self._counts.pop()

    def _enter(self, index: int, document: Mapping[str, int]) -> None:
        length = sum(document.values())
        self._lengths[index] = length
        self._total_length += length
        for term, count in document.items():
            if count:
                self._postings.setdefault(term, {})[index] = count

    def _leave(self, index: int, document: Mapping[str, int]) -> None:
        self._total_length -= sum(document.values())
        for term, count in document.items():
            if count:
                postings = self._postings[term]
                del postings[index]
                if not postings:
                    del self._postings[term]

    def scores(self, query_terms: Iterable[str]) -> NDArray[np.float64]:
        """Each document's score, in document order: a term given twice counts twice."""
        size = len(self._counts)
        scores = np.zeros(size)
        if size == 0:
            return scores
        k1, b = self._k1, self._b
        # At least one term on average: a handful of near-empty documents is not stretched.
        average = max(self._total_length / size, 1.0)
        length_norm = k1 * (1.0 - b + b * self._lengths[:size] / average)
        for term in query_terms:
            postings = self._postings.get(term)
            if not postings:
                continue
            documents = len(postings)
            where = np.fromiter(postings.keys(), dtype=np.intp, count=documents)
            frequencies = np.fromiter(postings.values(), dtype=np.float64, count=documents)
            idf = math.log(1.0 + (size - documents + 0.5) / (documents + 0.5))
            scores[where] += idf * frequencies * (k1 + 1.0) / (frequencies + length_norm[where])
        return scores


def term_counts(terms: Iterable[str]) -> dict[str, int]:
    return dict(Counter(terms))


def title_from_file_name(name: str) -> str:
    """What a person calls a document known only by its file name: the name without its kind
    and suffix, in words ("note-packing-list.md" is "Packing list")."""
    stem = re.sub(r"\.(md|txt|csv)$", "", name, flags=re.IGNORECASE)
    words = re.sub(r"^(note|list)[-_ ]+", "", stem, flags=re.IGNORECASE)
    words = " ".join(words.replace("-", " ").replace("_", " ").split()) or stem
    return words[:1].upper() + words[1:]


def document_title(name: str, text: str = "") -> str:
    """What a person calls a document: its heading, else its name without kind and suffix."""
    heading = next((line for line in text.splitlines() if line.strip()), "").strip()
    if heading.startswith("#"):
        return " ".join(heading.lstrip("# ").split()) or name
    return title_from_file_name(name)
