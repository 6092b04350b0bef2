"""Told records: what Violet told the person, kept so that it can be recalled, with its sources.

A told record holds Violet's own words (an answer, or a work result as she told it) and the
pages and documents they came from. It is never a fact about the person, and code keeps it so:
- it is its own kind of item (`TOLD`), never of origin "you", and merging of facts never sees it;
- the memory page lists it apart ("What I told you");
- recall gives told records in their own list, and none at all for a question about the person
  (`violet.told.may_recall_told`), whatever its caller asks.

A work result as told is always kept. An answer is kept when it tells something: something
specific in a few words (a number, an address, a quote, a name inside a sentence), or words
enough to explain something; so "I'm on it" and "Good to hear from you!" are not kept.

A newer record from the same source replaces the older one (the page read again), and a
correction (Violet saying she got something wrong) replaces her earlier words it shares the most
with, as a new value of a fact replaces the old. A question naming a kind of thing (a page, a
note, a sum) gets the records of that kind first (`fits`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from memory.provenance import VIOLET, content_stems, normalise
from memory.sources import Source, sources_from
from memory.store import TOLD, CapturedTurn, Item, new_item_id
from violet.clock import utc_now
from violet.language import detect

MAX_TOLD_CHARS = 4_000
# Words an answer needs to be kept: with something specific in it, and without.
MIN_WORDS = 5
MIN_WORDS_UNSPECIFIC = 24
_WORD = re.compile(r"\w+")
# A number, an address or a quote.
_SPECIFIC = re.compile(r"\d|https?://|[\"“«„]")
# A capitalised word inside a sentence: a name (German capitalises every noun, so not there).
_NAME = re.compile(r"(?<=[\w,;:] )(?!(?:I|I'm|I'll|I've|I'd)\b)[A-Z]\w")
# A correction replaces the earlier record it shares at least this many meaningful words with.
MIN_SHARED_WITH_CORRECTED = 2
# How far back a correction looks: the newest records only.
CORRECTS_WITHIN = 50
_CORRECTION = re.compile(
    r"\b(?:correction|i got (?:that|it|this) wrong|i was wrong|i made a mistake|my mistake"
    r"|i misread|i misspoke|i gave you the wrong|to correct (?:myself|what i said)"
    r"|not \S+(?: \S+){0,4},? as i (?:said|told you))\b",
    re.IGNORECASE,
)


def told_item(person: str, turn: CapturedTurn) -> Item | None:
    """The told record of a turn, or None when what was told tells nothing worth keeping."""
    text = turn.told.strip()
    # A result's telling (no words of the person's in the turn) is always kept.
    if not text or (
        turn.person_message.strip() and not tells_something(text) and not corrects(text)
    ):
        return None
    if len(text) > MAX_TOLD_CHARS:
        text = text[: MAX_TOLD_CHARS - 1].rstrip() + "…"
    first = turn.told_sources[0] if turn.told_sources else None
    return Item(
        id=new_item_id(),
        person=person,
        kind=TOLD,
        text=text,
        origin=VIOLET,
        quote=json.dumps([source.as_dict() for source in turn.told_sources], ensure_ascii=False),
        speaker="",
        source_seqs=turn.source_seqs,
        turn_items=(),
        previous_item=None,
        # A newer record from the same first source replaces this one.
        subject=first.key if first else None,
        subject_value=None,
        created_at=turn.at,
        updated_at=utc_now(),
    )


def tells_something(text: str) -> bool:
    """Whether an answer tells something worth recalling later."""
    words = len(_WORD.findall(text))
    specific = _SPECIFIC.search(text) or (detect([text]) != "de" and _NAME.search(text))
    return words >= (MIN_WORDS if specific else MIN_WORDS_UNSPECIFIC)


# What a question names, and what a told record of that kind holds.
_ASKS_FOR_PAGE = re.compile(r"\b(?:page|web\s*page|article|site|website|link|search)\b", re.I)
_ASKS_FOR_DOCUMENT = re.compile(r"\b(?:note|list|document|doc|file)s?\b", re.I)
_ASKS_FOR_NUMBER = re.compile(
    r"\b(?:sum|calculation|calculate|total|number|work(?:ed)?\s+out|add(?:ed)?\s+up)\b", re.I
)
_WORKED_OUT = re.compile(r"\d\s*[-+*/×÷^%]\s*\d|\d\s*=\s*-?\d")


def fits(question: str, item: Item) -> bool:
    """Whether the told record is of the kind the question names: a page, a document, or a
    number worked out. Recall puts such records first among the best told."""
    sources = sources_of(item)
    if _ASKS_FOR_PAGE.search(question) and any(source.page for source in sources):
        return True
    if _ASKS_FOR_DOCUMENT.search(question) and any(source.document for source in sources):
        return True
    return bool(_ASKS_FOR_NUMBER.search(question) and _WORKED_OUT.search(item.text))


def corrects(text: str) -> bool:
    """Whether Violet says she got something wrong before."""
    return _CORRECTION.search(text) is not None


def sources_of(item: Item) -> tuple[Source, ...]:
    try:
        stored = json.loads(item.quote) if item.kind == TOLD else []
    except ValueError:
        return ()
    return sources_from(stored if isinstance(stored, list) else [])


def source_label(item: Item) -> str:
    """Where the record came from, in plain words; empty when it came from Violet alone."""
    return "; ".join(source.label() for source in sources_of(item))


def replaced(new: Item, earlier: Sequence[Item]) -> list[str]:
    """The ids of the earlier told records the new one replaces: the same words told again,
    those from the same source, and for a correction the one it shares the most with (the
    newest of equals)."""
    older = [item for item in earlier if item.id != new.id and item.created_at <= new.created_at]
    said = normalise(new.text)
    gone = [
        item.id
        for item in older
        if (new.subject and item.subject == new.subject) or normalise(item.text) == said
    ]
    if corrects(new.text):
        wanted = content_stems(new.text)
        recent = sorted(older, key=lambda item: item.created_at)[-CORRECTS_WITHIN:]
        shared = [
            (len(wanted & content_stems(item.text)), item.created_at, item.id) for item in recent
        ]
        best = max(shared, default=None)
        if best and best[0] >= MIN_SHARED_WITH_CORRECTED and best[2] not in gone:
            gone.append(best[2])
    return gone
