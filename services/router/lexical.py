"""Word-level signals between a request and a person's topic cards: BM25, entity hits, and
whether the request reads like a short reply."""

from __future__ import annotations

import re
from collections.abc import Sequence

from violet.text import REQUEST_STOP_WORDS, Analyzer, Bm25, term_counts

# BM25 over a handful of cards: a gentle length normalisation, as cards differ little in length.
BM25_K1 = 1.2
BM25_B = 0.5

_WORD = re.compile(r"\w+")
_REQUESTS = Analyzer(_WORD, REQUEST_STOP_WORDS)
# The first word of a request that answers the last thing said rather than asking for something.
_REPLY_OPENERS = frozenset(
    _WORD.findall(
        """yes yeah yep yup sure ok okay no nope nah great perfect fine thanks thank good cool
    awesome sounds that correct right alright excellent wonderful nice it"""
    )
)
SHORT_REQUEST_WORDS = 6
# A request that opens with one of these verbs asks for new work, however short it is
# ("calculate 1234*2"): they are the requests Violet hands to background work.
_TASK_OPENERS = frozenset(
    _WORD.findall("look find check research plan remind fetch calculate write send")
)


def words(text: str) -> list[str]:
    return _REQUESTS.words(text)


def terms(text: str) -> list[str]:
    """Stemmed content words."""
    return _REQUESTS.terms(text)


def bm25(query: str, documents: Sequence[str]) -> list[float]:
    """BM25 of `query` against each document, with the documents themselves as the corpus; each
    word of the query counts once."""
    if not documents:
        return []
    index = Bm25([term_counts(terms(d)) for d in documents], BM25_K1, BM25_B)
    return index.scores(set(terms(query))).tolist()


def entity_hits(request: str, entities: Sequence[str]) -> float:
    """How many of the entities the request names; an entity named in part counts its share."""
    said = set(terms(request))
    total = 0.0
    for entity in entities:
        parts = set(terms(entity))
        if parts:
            total += len(parts & said) / len(parts)
    return total


def opens_with_task(request: str) -> bool:
    """Whether the request starts with a task verb ("calculate ...", "look up ...")."""
    found = words(request)
    return bool(found) and found[0] in _TASK_OPENERS


def reads_as_reply(request: str) -> bool:
    """A short request that starts like an answer ("yes, book it", "what's their number?"),
    not like a task of its own ("calculate 1234*2")."""
    found = words(request)
    if not found or opens_with_task(request):
        return False
    return found[0] in _REPLY_OPENERS or len(found) <= SHORT_REQUEST_WORDS
