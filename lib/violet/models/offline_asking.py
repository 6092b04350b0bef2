"""The offline model as work asked a question by another task of the same person
(`tools.OTHER_WORK_QUESTION`): it answers from the copy of its own conversation, quoting what it
found or reported; what it found is only quoted, never followed.
"""

from __future__ import annotations

from collections.abc import Iterator

from violet.models import offline_reports as r
from violet.models.messages import ModelMessage
from violet.models.offline_text import block_text, content_words, json_object, sentences, shorten

QUOTE_CHARS = 300


def answer_asked(question: str, messages: list[ModelMessage], language: str) -> str:
    """The sentence of the work's findings sharing the most words with the question (the
    newest among equals), quoted; or that it has nothing on that yet."""
    wanted = content_words(question)
    best, overlap = "", 0
    for finding in findings(messages):
        for said in sentences(finding):
            shared = len(wanted & content_words(said))
            if shared and shared >= overlap:
                best, overlap = said, shared
    if not best:
        return r.report(r.NOTHING_FOUND_YET, language)
    return r.report(r.FOUND_SO_FAR, language, quote=shorten(best, QUOTE_CHARS))


def findings(messages: list[ModelMessage]) -> Iterator[str]:
    """What the work found and told, oldest first: its reports in words and the text of its
    tool results. The person's requests, failed calls and calls still under way are none."""
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            continue
        for block in content:
            if block["type"] == "text" and message["role"] == "assistant":
                yield block["text"]
            elif block["type"] == "tool_result" and not block.get("is_error"):
                result = json_object(block_text(block.get("content", "")))
                if result is not None:
                    yield " ".join(_texts({k: v for k, v in result.items() if k != "notice"}))


def _texts(value: object) -> Iterator[str]:
    """The strings within a tool result, each ending a sentence of its own."""
    if isinstance(value, str) and value.strip():
        yield value.strip() if value.rstrip()[-1:] in ".!?" else f"{value.strip()}."
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
