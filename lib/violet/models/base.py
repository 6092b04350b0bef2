"""The one model interface every service codes against, whichever implementation is behind it.

Messages are Anthropic Messages API dicts: `{"role": "user" | "assistant", "content": str |
list[block]}` with `text`, `tool_use` ({id, name, input}) and `tool_result` ({tool_use_id,
content, is_error?}) blocks. Callers build them; the clients pass them through unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from violet.models.accounting import UsageLedger

Tier = Literal["main", "work"]


@dataclass(frozen=True)
class Tool:
    """A tool offered to the model; `input_schema` is a JSON schema of an object."""

    name: str
    description: str
    input_schema: dict


@dataclass
class ToolCall:
    id: str
    name: str
    input: dict


@dataclass
class Usage:
    model: str
    input_tokens: int
    output_tokens: int
    latency_s: float


@dataclass
class Reply:
    """One answer. `content` holds the assistant blocks to append to the conversation as-is."""

    text: str
    tool_calls: list[ToolCall]
    stop_reason: str
    usage: Usage
    content: list[dict]


class ModelClient(Protocol):
    ledger: UsageLedger

    async def reply(
        self,
        *,
        tier: Tier,
        system: str,
        messages: list[dict],
        tools: Sequence[Tool],
        person: str,
    ) -> Reply:
        """The next assistant turn of a conversation (main session or work session)."""
        ...

    async def structured(
        self, *, name: str, description: str, schema: dict, prompt: str, person: str
    ) -> dict:
        """A forced call of the tool `name` on the fast model; its input, validated against
        `schema`. Raises `ModelOutputInvalid` when it does not fit."""
        ...

    async def aclose(self) -> None:
        """Releases connections; the client is not used afterwards."""
        ...


def reply_from_blocks(content: list[dict], stop_reason: str, usage: Usage) -> Reply:
    text = "".join(block["text"] for block in content if block.get("type") == "text")
    calls = [
        ToolCall(id=block["id"], name=block["name"], input=dict(block.get("input") or {}))
        for block in content
        if block.get("type") == "tool_use"
    ]
    return Reply(text=text, tool_calls=calls, stop_reason=stop_reason, usage=usage, content=content)
