"""The provenance filter for items about the person: only their own statements become memory.

The fast model proposes items, each with an origin and a quote. Code decides: an item about the
person (origin "you") is kept only when
- its quote appears in the person's own message (whitespace, case and curly quotes aside), and
  there states something rather than report, deny, suppose or ask it ("my friend said my PIN is
  1234", "don't remember that ...", `violet.statements`);
- the item says what its quote says: half its content words and every number in it are there,
  and it states rather than denies.
Any other origin is dropped: Violet's own outcomes reach memory only as deeds (`memory.deeds`),
and her answers, pages, search results, documents, email and other work never do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from violet.statements import stated, states
from violet.text import STATEMENT_STOP_WORDS, stem

YOU = "you"
VIOLET = "violet"

MIN_QUOTE_CHARS = 3
# Share of the item's content words its quote must hold: a paraphrase passes, an item that
# borrows a real quote to say something else does not.
MIN_SUPPORT = 0.5

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})
_NUMBER = re.compile(r"\d+")


@dataclass(frozen=True)
class Proposed:
    """An item as the origin call proposed it."""

    text: str
    origin: str
    quote: str


def normalise(text: str) -> str:
    return " ".join(text.translate(_APOSTROPHES).casefold().split())


def content_stems(text: str) -> set[str]:
    """The stems of the words that carry meaning ("moved" and "moving" are one)."""
    return stems(w for w in _WORD.findall(normalise(text)) if w not in STATEMENT_STOP_WORDS)


def stems(words: Iterable[str]) -> set[str]:
    return set(stem(words))


def stated_in(quote: str, message: str) -> bool:
    """Whether the quote is in the message, and states something there (at least once)."""
    wanted = normalise(quote)
    # Normalised line by line: a line break still ends a sentence, and counts as one space.
    lines = "\n".join(line for line in map(normalise, message.splitlines()) if line)
    said = lines.replace("\n", " ")
    if len(wanted) < MIN_QUOTE_CHARS:
        return False
    at = said.find(wanted)
    while at >= 0:
        if stated(lines, at, at + len(wanted)):
            return True
        at = said.find(wanted, at + 1)
    return False


def supported_by(text: str, quote: str) -> bool:
    said = content_stems(text)
    if not said:
        return False
    numbers_shown = set(_NUMBER.findall(text)) <= set(_NUMBER.findall(quote))
    return numbers_shown and len(said & content_stems(quote)) / len(said) >= MIN_SUPPORT


def keep(proposed: Iterable[Proposed], *, person_message: str) -> list[Proposed]:
    """The proposed items whose provenance checks out, each once."""
    kept: dict[str, Proposed] = {}
    for item in proposed:
        if checks_out(item, person_message):
            kept.setdefault(normalise(item.text), item)
    return list(kept.values())


def checks_out(item: Proposed, person_message: str) -> bool:
    return (
        item.origin == YOU
        and bool(item.text.strip())
        and states(item.text)
        and stated_in(item.quote, person_message)
        and supported_by(item.text, item.quote)
    )
