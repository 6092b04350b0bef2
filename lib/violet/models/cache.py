"""Prompt-cache breakpoints (the Messages API's `cache_control`), placed one way by every caller.

The API reads a request as tools, then system, then messages. Each block marked with
`cache_control` ends a prefix that is cached for 5 minutes after its last use; a later request
that starts with the same blocks reads that prefix back at a tenth of the price, and pays a
quarter more for the part it writes. A request holds at most 4 breakpoints. So the stable parts
come first, each ending in a breakpoint, and what changes with every call comes after the last.
"""

from __future__ import annotations

from violet.models.base import System
from violet.models.messages import CacheControl, ContentBlock, ModelMessage, TextBlock

EPHEMERAL: CacheControl = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4


def cached_system(*segments: str) -> list[TextBlock]:
    """The system prompt as text blocks, one per non-empty segment, each ending in a
    breakpoint. Segments go from the most stable to the least."""
    return [
        {"type": "text", "text": segment, "cache_control": EPHEMERAL.copy()}
        for segment in segments
        if segment
    ]


def _as_blocks(content: str | list[ContentBlock]) -> list[ContentBlock]:
    """A message's content as a list of blocks (copies, so marking one changes no caller's)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block.copy() for block in content]


def cached_through_last(messages: list[ModelMessage]) -> list[ModelMessage]:
    """A copy of `messages` with a breakpoint on the last block of the last message: the next
    call, which starts with all of these, reads them from the cache. (A thinking block cannot
    carry one; no conversation ends in one, as each ends with a user turn.)"""
    if not messages:
        return []
    *earlier, last = messages
    blocks = _as_blocks(last["content"])
    marked = blocks[-1]
    if marked["type"] == "thinking" or marked["type"] == "redacted_thinking":
        raise ValueError("a conversation sent to the model ends with a user turn")
    marked["cache_control"] = EPHEMERAL.copy()
    return [*earlier, {**last, "content": blocks}]


def system_text(system: System) -> str:
    """The system prompt as one text, however it is split into blocks."""
    if isinstance(system, str):
        return system
    return "\n\n".join(block["text"] for block in system if block["type"] == "text")
