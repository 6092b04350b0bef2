"""The Messages API structures as typed dicts: messages, content blocks, tool use and results.

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


ContentBlock = TextBlock | ToolUseBlock | ToolResultBlock


class ModelMessage(TypedDict):
    """One message of a model conversation; `content` is plain text or a list of blocks."""

    role: Role
    content: str | list[ContentBlock]
