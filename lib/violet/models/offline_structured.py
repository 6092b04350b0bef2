"""The offline model's structured answers: an extractive fold, a score-threshold pick, and
pattern-based memory origins (the person's own statements only)."""

from __future__ import annotations

import re
from collections.abc import Callable

from violet.models.messages import JsonObject
from violet.models.offline_text import content_words, first_sentence, shorten, squash
from violet.models.structured import (
    FOLD,
    NEW,
    ORIGIN,
    PICK,
    PICK_THRESHOLD,
    SUMMARY_MAX_CHARS,
    read_input,
)
from violet.statements import stated

LINE_MAX_CHARS = 160
# A clause ends at punctuation before a space or the end ("1.85 m" and "a@b.org" go on).
_CLAUSE_END = r"(?=\s*(?:[.!?;,](?=\s|$)|\n|$)|\s+(?:and|but)\s+(?:i|my)\b)"
_MY_IS = re.compile(
    rf"\bmy\s+(?:[\w'’-]+\s+){{0,3}}?[\w'’-]+\s+is\s+.+?{_CLAUSE_END}", re.IGNORECASE
)
_I_VERB = re.compile(
    rf"\bi\s+(?:take|like|love|prefer|live\s+in)\s+.+?{_CLAUSE_END}", re.IGNORECASE
)
_REMEMBER = re.compile(
    r"\bremember\s+that\s+(?P<fact>.+?)(?=\s*(?:[.!?;](?=\s|$)|\n|$))", re.IGNORECASE
)
_DONE = re.compile(r"^\W*done\b", re.IGNORECASE)


def structured_answer(name: str, prompt: str) -> JsonObject:
    """The offline answer to the structured call `name`. Raises KeyError for a call it has no
    rule for, ValueError for a prompt it cannot read."""
    rule: Callable[[JsonObject], JsonObject] = _RULES[name]
    return rule(read_input(prompt))


def facts(message: str) -> list[tuple[str, str]]:
    """(text, quote) for each fact the person states: `my X is Y`, `I take|like|love|prefer|
    live in X`, `remember that X`. Quotes are verbatim; words the person asks, denies, reports
    or supposes state no fact (`violet.statements`)."""
    found: list[tuple[str, str]] = []
    taken: list[range] = []
    for match in _REMEMBER.finditer(message):
        taken.append(range(match.start(), match.end()))
        if stated(message, match.start(), match.end()):
            found.append((_sentence_case(match.group("fact")), match.group(0)))
    for pattern in (_MY_IS, _I_VERB):
        for match in pattern.finditer(message):
            if any(match.start() in span for span in taken):
                continue
            if stated(message, match.start(), match.end()):
                found.append((_sentence_case(match.group(0)), match.group(0)))
    return list(dict.fromkeys(found))


def _sentence_case(text: str) -> str:
    text = squash(text)
    return text[:1].upper() + text[1:]


def _fold(data: JsonObject) -> JsonObject:
    promises: list[str] = list(data["open_promises"])
    lines = [(line["speaker"], line["text"]) for line in data["lines"]]
    kept = _kept_promises(promises, [text for speaker, text in lines if speaker == "violet"])
    parts = [squash(data["previous_summary"])] if data["previous_summary"].strip() else []
    for speaker, text in lines:
        if speaker == "person" or _DONE.match(text):
            label = "Person" if speaker == "person" else "Violet"
            parts.append(f"{label}: {first_sentence(text, LINE_MAX_CHARS)}")
    return {
        "summary": _fit(parts, SUMMARY_MAX_CHARS),
        "open_promises": [p for p in promises if p not in kept],
        "kept": [p for p in promises if p in kept],
    }


def _kept_promises(promises: list[str], violet_lines: list[str]) -> set[str]:
    """Each line of Violet's that starts with "Done" keeps one open promise: the one sharing
    most words with it, else the oldest."""
    kept: set[str] = set()
    for line in violet_lines:
        if not _DONE.match(line):
            continue
        still_open = [p for p in promises if p not in kept]
        if not still_open:
            break
        words = content_words(line)
        best = max(still_open, key=lambda p: len(words & content_words(p)))
        kept.add(best if words & content_words(best) else still_open[0])
    return kept


def _fit(parts: list[str], limit: int) -> str:
    """The newest parts that fit in `limit` characters, one a line."""
    while len(parts) > 1 and len("\n".join(parts)) > limit:
        parts = parts[1:]
    return shorten("\n".join(parts), limit)


def _pick(data: JsonObject) -> JsonObject:
    candidates = data["candidates"]
    if not candidates:
        return {"choice": NEW, "confidence": 1.0, "reason": "no candidates"}
    best = max(candidates, key=lambda c: c["score"])
    score = min(1.0, max(0.0, float(best["score"])))
    if score >= PICK_THRESHOLD:
        return {
            "choice": best["id"],
            "confidence": round(score, 4),
            "reason": f"closest match, score {score:.2f}",
        }
    return {
        "choice": NEW,
        "confidence": round(1.0 - score, 4),
        "reason": f"no close match, best score {score:.2f}",
    }


def _origin(data: JsonObject) -> JsonObject:
    return {
        "items": [
            {"text": text, "origin": "you", "quote": quote}
            for text, quote in facts(data["person_message"])
        ]
    }


_RULES: dict[str, Callable[[JsonObject], JsonObject]] = {FOLD: _fold, PICK: _pick, ORIGIN: _origin}
