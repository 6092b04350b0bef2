"""The provenance filter: only the person's own words and results Violet confirmed become memory.

The fast model proposes items, each with an origin and a quote. Code keeps an item only when its
quote really appears in the text its origin names (the person's message for "you", the confirmed
result for "violet"), after normalising whitespace and case, and when the item says what its
quote says. A confirmed result reports what was done: an item from it that tells memory what to
keep ("remember that ...") is text a page or a document planted, and is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

import Stemmer

YOU = "you"
VIOLET = "violet"

MIN_QUOTE_CHARS = 3
# Share of the item's content words its quote must hold: a paraphrase passes, an item that
# borrows a real quote to say something else does not.
MIN_SUPPORT = 0.5

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})
_PLANTED = re.compile(
    r"\b(?:remember|memori[sz]e|don'?t\s+forget|do\s+not\s+forget|make\s+a\s+note|note\s+that"
    r"|save\s+(?:this|that)\s+to\s+memory|store\s+(?:this|that)|keep\s+in\s+mind)\b",
    re.IGNORECASE,
)
_FUNCTION_WORD_LIST = """
    a an the and or but of to in on at for with from by as is are was were be been am i i'm
    my me you your he she it its we our they their this that these those do does did has have
    had not no so than then there here what which who whom whose when where why how will would
    can could should shall may might must just very too also about into over after before up
    down out off again once person person's user user's
"""
_FUNCTION_WORDS = frozenset(_FUNCTION_WORD_LIST.split())


@dataclass(frozen=True)
class Proposed:
    """An item as the origin call proposed it."""

    text: str
    origin: str
    quote: str


def normalise(text: str) -> str:
    return " ".join(text.translate(_APOSTROPHES).casefold().split())


def content_words(text: str) -> set[str]:
    """The stems of the words that carry meaning ("moved" and "moving" are one)."""
    words = [word for word in _WORD.findall(normalise(text)) if word not in _FUNCTION_WORDS]
    return set(_stemmer().stemWords(words))


@cache
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def quoted_in(quote: str, source: str | None) -> bool:
    wanted = normalise(quote)
    return bool(source) and len(wanted) >= MIN_QUOTE_CHARS and wanted in normalise(source or "")


def supported_by(text: str, quote: str) -> bool:
    said = content_words(text)
    if not said:
        return False
    return len(said & content_words(quote)) / len(said) >= MIN_SUPPORT


def keep(
    proposed: Iterable[Proposed], *, person_message: str, confirmed_result: str | None
) -> list[Proposed]:
    """The proposed items whose provenance checks out, each once."""
    kept: dict[str, Proposed] = {}
    for item in proposed:
        if _checks_out(item, person_message, confirmed_result):
            kept.setdefault(normalise(item.text), item)
    return list(kept.values())


def _checks_out(item: Proposed, person_message: str, confirmed_result: str | None) -> bool:
    if not item.text.strip():
        return False
    if item.origin == YOU:
        source = person_message
    elif item.origin == VIOLET:
        if _PLANTED.search(item.quote) or _PLANTED.search(item.text):
            return False
        source = confirmed_result
    else:
        return False
    return quoted_in(item.quote, source) and supported_by(item.text, item.quote)
