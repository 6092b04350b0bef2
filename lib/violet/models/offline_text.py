"""Small text helpers the offline model's rules share."""

from __future__ import annotations

import hashlib
import json
import math
import re

from violet.models.messages import JsonObject
from violet.text import PROMPT_STOP_WORDS

_LEAD = re.compile(r"^\s*(?:(?:please|can you|could you)\b[\s,]*)+", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
_SENTENCE = re.compile(r"(.+?[.!?])(?=\s|$)", re.DOTALL)
_SENTENCES = re.compile(r".+?(?:[.!?]+(?=\s|$)|$)")


def strip_lead(text: str) -> str:
    """The text without a leading "please" / "can you" (any mix), and outer whitespace."""
    return _LEAD.sub("", text.strip(), count=1).strip()


def squash(text: str) -> str:
    return " ".join(text.split())


def content_words(text: str) -> set[str]:
    """Lower-case words that carry meaning, with possessives and plain plurals folded."""
    words = set()
    for raw in _WORD.findall(text.lower().replace("’", "'")):
        word = raw.removesuffix("'s")
        if word in PROMPT_STOP_WORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.add(word)
    return words


def first_sentence(text: str, limit: int = 300) -> str:
    flat = squash(text)
    found = _SENTENCE.match(flat)
    return shorten(found.group(1) if found else flat, limit)


def sentences(text: str) -> list[str]:
    return [found.strip() for found in _SENTENCES.findall(squash(text)) if found.strip()]


def shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0] or text[: limit - 1]
    return cut.rstrip(" ,;:") + "…"


def stable_index(text: str, count: int) -> int:
    """The same index for the same text in every process (unlike `hash`)."""
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % count


def block_text(content: object) -> str:
    """The text of a message or tool_result content: a string or a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def json_object(text: str) -> JsonObject | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def estimate_tokens(text: str) -> int:
    """Tokens as the 5.5 models' tokenizer counts them, near enough: about 30% more than a
    quarter of the characters."""
    return math.ceil(len(text) * 1.3 / 4)
