"""The strict structured calls on the fast model: the fold, the routing pick, the memory origin.

Each is one structured answer (JSON that fits a strict schema built for its inputs). The prompt
ends with the inputs as JSON between `<input>` and `</input>` lines, which both a real model and
the offline model read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from violet.fallbacks import fallback
from violet.models.base import ModelClient
from violet.models.messages import JsonObject
from violet.models.validation import strict_object

FOLD = "fold"
PICK = "pick"
ORIGIN = "origin"

SUMMARY_MAX_CHARS = 1000
PICK_THRESHOLD = 0.5
NEW = "new"

_INPUT_START = "<input>\n"
_INPUT_END = "\n</input>"


@dataclass
class Fold:
    summary: str
    open_promises: list[str]
    kept: list[str]


@dataclass
class Candidate:
    id: str
    description: str
    score: float


@dataclass
class Pick:
    choice: str
    confidence: float
    reason: str


@dataclass
class OriginItem:
    text: str
    origin: Literal["you"]
    quote: str


def with_input(instructions: str, data: JsonObject) -> str:
    """The prompt: instructions, then the inputs as JSON (one line, so no line of it can end
    the block early)."""
    return f"{instructions}\n\n{_INPUT_START}{json.dumps(data, ensure_ascii=False)}{_INPUT_END}"


def read_input(prompt: str) -> JsonObject:
    """The inputs of a prompt made by `with_input`; raises ValueError on any other prompt."""
    start = prompt.index(_INPUT_START) + len(_INPUT_START)
    end = prompt.rindex(_INPUT_END)
    data = json.loads(prompt[start:end])
    if not isinstance(data, dict):
        raise ValueError("the input block is not a JSON object")
    return data


def _promise_list(description: str) -> JsonObject:
    # Plain strings, checked in code (`fold`): the promises' words are the person's, and a
    # schema is cached apart from the request for a day, so none of them goes in one; and one
    # schema for every fold is one grammar, compiled once.
    return {"type": "array", "items": {"type": "string"}, "description": description}


def fold_schema() -> JsonObject:
    """The fold's schema: the same for every fold, with nothing of the person's in it."""
    return strict_object(
        # Not a hard limit in the schema: a longer summary is clipped (`clip`), not refused.
        summary={
            "type": "string",
            "description": "The new summary of the whole conversation so far, at most "
            f"{SUMMARY_MAX_CHARS} characters.",
        },
        open_promises=_promise_list("The promises still open, each copied exactly from the input."),
        kept=_promise_list("The promises the conversation shows as done, each copied exactly."),
    )


def pick_schema(candidate_ids: list[str]) -> JsonObject:
    return strict_object(
        choice={
            "type": "string",
            "enum": [*dict.fromkeys(candidate_ids), NEW],
            "description": f'The id of the topic the request continues, or "{NEW}".',
        },
        confidence={"type": "number", "minimum": 0, "maximum": 1},
        reason={"type": "string", "description": "Why, in one short sentence."},
    )


def origin_schema() -> JsonObject:
    # Only the person's own words make items here: Violet's own outcomes reach memory as deeds,
    # in words the memory service's code chooses.
    item = strict_object(
        text={"type": "string", "description": "The fact, in a short sentence."},
        origin={"type": "string", "enum": ["you"]},
        quote={"type": "string", "description": "The exact words that show it, copied."},
    )
    return strict_object(items={"type": "array", "items": item})


FOLD_INSTRUCTIONS = (
    "You keep the running summary of a long conversation between a person and Violet, their "
    "assistant. Fold the new lines into the previous summary: keep what matters later (facts, "
    "decisions, requests and their outcomes), drop small talk, stay within "
    f"{SUMMARY_MAX_CHARS} characters. Of the open promises, list the ones still open and the "
    "ones a later line of Violet's shows as done, each copied exactly."
)
PICK_INSTRUCTIONS = (
    "A person made a request. Decide which of their ongoing topics it continues, or whether it "
    f'is new work ("{NEW}"). Each candidate has a score from a first search, the chance that '
    "the request continues it. A request often answers what a topic's last outcome asked or "
    'offered ("In Oakland." after "In which city?", "Yes, book it." after "Shall I book '
    'it?"), so read each last outcome; a request for something no topic is about is new work. '
    "Answer with the topic's id, your confidence from 0 to 1, and a short reason."
)
ORIGIN_INSTRUCTIONS = (
    "Find what is worth remembering about the person in this exchange. Take facts only from "
    'what the person states about themselves in their own message (origin "you"), never from '
    "Violet's answer. Leave out what the person reports others saying, denies, supposes, asks, "
    "or asks you not to remember. For each item copy the exact words that show it as the "
    "quote. Return no items when there is nothing to keep."
)


async def fold(
    client: ModelClient,
    *,
    previous_summary: str,
    lines: list[tuple[str, str]],
    open_promises: list[str],
    person: str,
) -> Fold:
    """`lines` are (speaker, text) with speaker "person" or "violet", oldest first."""
    promises = list(dict.fromkeys(open_promises))
    data = {
        "previous_summary": previous_summary,
        "open_promises": promises,
        "lines": [{"speaker": speaker, "text": text} for speaker, text in lines],
    }
    answer = await client.structured(
        name=FOLD,
        description="Record the new summary and the state of the open promises.",
        schema=fold_schema(),
        prompt=with_input(FOLD_INSTRUCTIONS, data),
        person=person,
    )
    summary = clip(answer["summary"], SUMMARY_MAX_CHARS)
    named = {key: list(answer[key]) for key in ("open_promises", "kept")}
    unknown = [text for texts in named.values() for text in texts if text not in promises]
    if unknown:
        fallback("fold_promise_unknown", f"{len(unknown)} promise(s) not among those given")
    return Fold(summary, _among(named["open_promises"], promises), _among(named["kept"], promises))


def _among(named: list[str], promises: list[str]) -> list[str]:
    """The promises an answer named that are among those given, each once: a promise the model
    reworded or made up is not one (a promise named in neither list stays open: `session.fold`)."""
    return [text for text in dict.fromkeys(named) if text in promises]


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters: at its last sentence end within them, else at
    its last word, with an ellipsis."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    sentence_end = max(head.rfind(mark) for mark in (". ", "! ", "? "))
    if sentence_end > limit // 2:
        return head[: sentence_end + 1]
    return (head.rsplit(" ", 1)[0] or head).rstrip(" ,;:") + "…"


async def pick(
    client: ModelClient, *, request: str, candidates: list[Candidate], person: str
) -> Pick:
    if not candidates:
        return Pick(NEW, 1.0, "no candidates")
    data = {
        "request": request,
        "candidates": [
            {"id": c.id, "description": c.description, "score": round(c.score, 4)}
            for c in candidates
        ],
    }
    answer = await client.structured(
        name=PICK,
        description="Record which topic the request continues.",
        schema=pick_schema([c.id for c in candidates]),
        prompt=with_input(PICK_INSTRUCTIONS, data),
        person=person,
    )
    return Pick(answer["choice"], float(answer["confidence"]), answer["reason"])


async def origin(
    client: ModelClient,
    *,
    person_message: str,
    violet_answer: str,
    person: str,
) -> list[OriginItem]:
    data = {"person_message": person_message, "violet_answer": violet_answer}
    answer = await client.structured(
        name=ORIGIN,
        description="Record the items worth remembering, each with its origin and quote.",
        schema=origin_schema(),
        prompt=with_input(ORIGIN_INSTRUCTIONS, data),
        person=person,
    )
    return [OriginItem(i["text"], i["origin"], i["quote"]) for i in answer["items"]]
