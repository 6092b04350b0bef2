"""What reaches the person is checked in code: Violet's own text never carries how she works.

A model may write what its context showed it: the ids the stack issues (promise and approval
ids in Open items, the API's tool-call ids), a tool's name, a model's name, or the name of one of
Violet's inner workings (CONTRACTS section 4: "work session", "topic card"). Before an answer is
stored, ids and model names are removed, tool names become the plain words for what they do, and
the names of inner workings become everyday ones ("work session" reads "background task").

Everyday words are the person's and Violet's: "fold in the egg whites", "my credit card", "the
bus route", "a summary of the article" pass as they are. Keeping the model from speaking of its
workings in such words ("the router", "the fold") is the instructions' part, not this code's.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from violet.metrics import ANSWERS_MENDED
from violet.models import tools as t

# Ids the stack issues or the model API hands out, in whatever case a model writes them.
ISSUED_ID = re.compile(
    r"\b(?:(?:c|m|t|ap)_[0-9a-f]{16}|(?:p|a|w|r)_[0-9a-f]{8}"
    r"|(?:toolu|srvtoolu|msg|req)_[0-9a-z]{8,}"
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b",
    re.IGNORECASE,
)
TOOL_WORDS = {
    t.START_WORK: "my background work",
    t.RECORD_PROMISE: "my notes",
    t.KEEP_PROMISE: "my notes",
    t.ANSWER_APPROVAL: "your answer",
    t.SET_REMINDER: "a reminder",
    t.LIST_REMINDERS: "your reminders",
    t.CANCEL_REMINDER: "the reminder",
    t.FETCH_PAGE: "the page",
    t.WEB_SEARCH: "a web search",
    t.RUN_PYTHON: "a calculation",
    t.WRITE_DOCUMENT: "a document",
    t.READ_DOCUMENT: "your document",
    t.LIST_DOCUMENTS: "your documents",
    t.SEND_EMAIL: "the email",
    t.ASK_WORK_SESSION: "my other work",
}
TOOL_NAME = re.compile(r"`?\b(" + "|".join(map(re.escape, TOOL_WORDS)) + r")\b`?", re.IGNORECASE)
# A model's id as the API names it (`claude-opus-5-5`, `claude-haiku-5-5-20261001`).
MODEL_NAME = re.compile(r"`?\bclaude-[a-z0-9]+(?:[-.][a-z0-9]+)*\b`?", re.IGNORECASE)
# The names of Violet's inner workings (singular and plural), never everyday words, and the
# everyday words that take their place.
EVERYDAY = {
    "work session": ("background task", "background tasks"),
    "topic card": ("note", "notes"),
}
INTERNAL_WORD = re.compile(
    r"\b(" + "|".join(rf"{re.escape(word)}s?" for word in EVERYDAY) + r")\b", re.IGNORECASE
)
_EMPTY_BRACKETS = re.compile(r"\s*[(\[]\s*[)\]]")
_SPACES = re.compile(r"[ \t]{2,}")
_SPACE_BEFORE_MARK = re.compile(r"[ \t]+([.,;:!?])")


@dataclass(frozen=True)
class Mended:
    text: str
    changes: Counter[str]  # by kind: "id", "tool name", "model name", "internal word"


def in_plain_words(text: str) -> Mended:
    """`text` with nothing internal left in it, and what was changed."""
    changes: Counter[str] = Counter()
    text = _replace(ISSUED_ID, text, lambda _: "", changes, "id")
    text = _replace(TOOL_NAME, text, lambda m: TOOL_WORDS[m.group(1).lower()], changes, "tool name")
    text = _replace(MODEL_NAME, text, lambda _: "", changes, "model name")
    text = _replace(INTERNAL_WORD, text, _everyday, changes, "internal word")
    if changes:
        text = _tidy(text)
        for kind, count in changes.items():
            ANSWERS_MENDED.add(count, {"violet.mended": kind})
    return Mended(text, changes)


def _replace(
    pattern: re.Pattern[str],
    text: str,
    words: Callable[[re.Match[str]], str],
    changes: Counter[str],
    kind: str,
) -> str:
    mended, count = pattern.subn(words, text)
    if count:
        changes[kind] += count
    return mended


def _everyday(match: re.Match[str]) -> str:
    said = match.group(1)
    lower = " ".join(said.lower().split())
    one, many = EVERYDAY[lower.removesuffix("s")]
    return _cased(one if lower in EVERYDAY else many, like=said)


def _cased(words: str, like: str) -> str:
    """`words`, capitalised when `like` is."""
    return words[0].upper() + words[1:] if like[0].isupper() else words


def _tidy(text: str) -> str:
    """The spaces and brackets a removed id leaves behind."""
    text = _EMPTY_BRACKETS.sub("", text)
    text = _SPACE_BEFORE_MARK.sub(r"\1", text)
    return "\n".join(_SPACES.sub(" ", line).strip() for line in text.splitlines()).strip()
