"""The Messages API structures as typed dicts: messages, content blocks, tool use and results,
thinking.

They stay dicts because they travel as JSON as they are: to the model, into the stores, back. A
block of a kind not listed here (none is asked for) passes through the clients unchanged.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

JsonObject = dict[str, Any]
"""A JSON object whose shape a schema or a tool decides: a tool's input, a schema itself, a
structured answer, a deed."""

Role = Literal["user", "assistant"]


class CacheControl(TypedDict):
    type: Literal["ephemeral"]


class TextBlock(TypedDict):
    type: Literal["text"]
    text: str
    cache_control: NotRequired[CacheControl]


class ToolUseBlock(TypedDict):
    type: Literal["tool_use"]
    id: str
    name: str
    input: JsonObject
    cache_control: NotRequired[CacheControl]


class ToolResultBlock(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str
    content: str
    is_error: NotRequired[bool]
    cache_control: NotRequired[CacheControl]


class ThinkingBlock(TypedDict):
    """The model's reasoning, sent back exactly as it came: `thinking` is empty when the API
    omits its text; `signature` binds it to everything that came before it."""

    type: Literal["thinking"]
    thinking: str
    signature: str


class RedactedThinkingBlock(TypedDict):
    type: Literal["redacted_thinking"]
    data: str


ContentBlock = TextBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock
THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})


class ModelMessage(TypedDict):
    """One message of a model conversation; `content` is plain text or a list of blocks."""

    role: Role
    content: str | list[ContentBlock]


def without_thinking(messages: list[ModelMessage]) -> list[ModelMessage]:
    """The messages with their thinking blocks left out. An earlier turn's reasoning may be
    omitted, and must be once anything before it has changed: a thinking block is bound to the
    exact prefix that produced it."""
    kept: list[ModelMessage] = []
    for message in messages:
        content = message["content"]
        if isinstance(content, list) and any(b["type"] in THINKING_TYPES for b in content):
            content = [b for b in content if b["type"] not in THINKING_TYPES]
        kept.append({**message, "content": content})
    return kept
