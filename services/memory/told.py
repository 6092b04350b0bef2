"""Told records: what Violet told the person, kept so that it can be recalled, with its sources.

A told record holds Violet's own words (an answer, or a work result as she told it) and the
pages and documents they came from. It is never a fact about the person, and code keeps it so:
- it is its own kind of item (`TOLD`), never of origin "you", and merging of facts never sees it;
- the memory page lists it apart ("What I told you");
- recall gives told records in their own list, and none at all for a question about the person
  (`violet.told.may_recall_told`), whatever its caller asks.

Words that tell nothing ("I'm on it", "Got it") are not kept: a record needs a few words that
carry meaning. A newer record from the same source replaces the older one (the page read again),
and a correction (Violet saying she got something wrong) replaces her earlier words it shares
the most with, as a new value of a fact replaces the old.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from memory.provenance import VIOLET, content_stems
from memory.sources import Source, sources_from
from memory.store import TOLD, CapturedTurn, Item, new_item_id
from violet.clock import utc_now

MAX_TOLD_CHARS = 4_000
# Words that carry meaning a told record needs, so that stock replies are not kept.
MIN_CONTENT_WORDS = 4
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
    if len(content_stems(text)) < MIN_CONTENT_WORDS:
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
    """The ids of the earlier told records the new one replaces: those from the same source,
    and for a correction the one it shares the most with (the newest of equals)."""
    older = [item for item in earlier if item.id != new.id and item.created_at <= new.created_at]
    gone = [item.id for item in older if new.subject and item.subject == new.subject]
    if _CORRECTION.search(new.text):
        wanted = content_stems(new.text)
        recent = sorted(older, key=lambda item: item.created_at)[-CORRECTS_WITHIN:]
        shared = [
            (len(wanted & content_stems(item.text)), item.created_at, item.id) for item in recent
        ]
        best = max(shared, default=None)
        if best and best[0] >= MIN_SHARED_WITH_CORRECTED and best[2] not in gone:
            gone.append(best[2])
    return gone
