"""The one model interface every service codes against, whichever implementation is behind it.

Messages are Anthropic Messages API dicts (`violet.models.messages`): `{"role": "user" |
"assistant", "content": str | list[block]}` with `text`, `tool_use` ({id, name, input}) and
`tool_result` ({tool_use_id, content, is_error?}) blocks. The system prompt is a string or a list
of `text` blocks. Any block may carry a `cache_control` breakpoint (`violet.models.cache` places
them). Callers build all of it; the clients pass it through unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from violet.models.messages import ContentBlock, JsonObject, ModelMessage, TextBlock

if TYPE_CHECKING:
    from violet.models.accounting import UsageLedger

Tier = Literal["main", "work"]
ToolChoice = Literal["auto", "none"]
System = str | list[TextBlock]


@dataclass(frozen=True)
class Tool:
    """A tool offered to the model; `input_schema` is a JSON schema of an object."""

    name: str
    description: str
    input_schema: JsonObject


@dataclass
class ToolCall:
    id: str
    name: str
    input: JsonObject


@dataclass
class Usage:
    """Tokens of one call. As the Messages API counts them, `input_tokens` are the ones read
    afresh: the prompt is `input_tokens + cache_write_tokens + cache_read_tokens` long."""

    model: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_1h_tokens: int = 0  # the part of `cache_write_tokens` kept for an hour
    # US dollars, priced request by request at each one's own model and prompt length
    # (`violet.models.prices`); None where nothing prices it (the offline model).
    cost_usd: float | None = None

    @property
    def prompt_tokens(self) -> int:
        return self.input_tokens + self.cache_write_tokens + self.cache_read_tokens

    def plus(self, other: Usage) -> Usage:
        """Both requests' tokens together, as one call's (the later request's model); their
        costs added as each was priced, never priced again as one longer prompt."""
        return Usage(
            model=other.model,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            latency_s=other.latency_s,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_1h_tokens=self.cache_write_1h_tokens + other.cache_write_1h_tokens,
            cost_usd=_added(self.cost_usd, other.cost_usd),
        )


def _added(one: float | None, other: float | None) -> float | None:
    if one is None and other is None:
        return None
    return (one or 0.0) + (other or 0.0)


@dataclass
class Reply:
    """One answer. `content` holds the assistant blocks to append to the conversation as-is."""

    text: str
    tool_calls: list[ToolCall]
    stop_reason: str
    usage: Usage
    content: list[ContentBlock]


class ModelClient(Protocol):
    ledger: UsageLedger

    async def reply(
        self,
        *,
        tier: Tier,
        system: System,
        messages: list[ModelMessage],
        tools: Sequence[Tool],
        person: str,
        tool_choice: ToolChoice = "auto",
    ) -> Reply:
        """The next assistant turn of a conversation (main session or work session). With
        `tool_choice="none"` the tools stay offered (a conversation that holds tool calls
        needs them) but the answer is in words. Raises `ModelRefused` when the model declines
        and `ModelContextFull` when the conversation no longer fits; an answer cut at its
        length limit comes back with `stop_reason="max_tokens"` and no tool calls."""
        ...

    async def structured(
        self, *, name: str, description: str, schema: JsonObject, prompt: str, person: str
    ) -> JsonObject:
        """The fast model's JSON answer named `name` (`description` says what it is),
        validated against `schema`. Raises `ModelOutputInvalid` when it does not fit and
        `ModelRefused` when the models decline."""
        ...

    async def aclose(self) -> None:
        """Releases connections; the client is not used afterwards."""
        ...


def reply_from_blocks(content: list[ContentBlock], stop_reason: str, usage: Usage) -> Reply:
    text = "".join(block["text"] for block in content if block["type"] == "text")
    calls = [
        ToolCall(id=block["id"], name=block["name"], input=dict(block.get("input") or {}))
        for block in content
        if block["type"] == "tool_use"
    ]
    return Reply(text=text, tool_calls=calls, stop_reason=stop_reason, usage=usage, content=content)
