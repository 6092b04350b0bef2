"""The offline model: the deterministic stand-in of CONTRACTS section 5, behind the same
interface and answering in the same shapes as the real one."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from violet.models.accounting import LEDGER, CallRecord, UsageLedger, model_call
from violet.models.base import Reply, System, Tier, Tool, ToolChoice, Usage, reply_from_blocks
from violet.models.cache import system_text
from violet.models.errors import ModelRejected
from violet.models.messages import ContentBlock, JsonObject, ModelMessage
from violet.models.offline_rules import respond
from violet.models.offline_structured import structured_answer
from violet.models.offline_text import estimate_tokens
from violet.models.validation import structured_answer as checked_answer

OFFLINE_MODEL = "offline"


def _output_text(content: list[ContentBlock]) -> str:
    return "".join(
        block["text"] if block["type"] == "text" else json.dumps(block.get("input"))
        for block in content
    )


class OfflineModelClient:
    def __init__(self, *, ledger: UsageLedger | None = None) -> None:
        self.ledger = ledger or LEDGER

    @contextmanager
    def _call(
        self, person: str, call: str, system: System | None, messages: list[ModelMessage]
    ) -> Iterator[CallRecord]:
        """One call of the stand-in, accounted like a real one: it never needs a retry."""
        with model_call(
            ledger=self.ledger,
            person=person,
            call=call,
            model=OFFLINE_MODEL,
            system=system,
            messages=messages,
        ) as record:
            record.attempts = 1
            yield record

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
        with self._call(person, f"reply.{tier}", system, messages) as record:
            offered = {tool.name for tool in tools} if tool_choice == "auto" else set()
            instructions = system_text(system)
            content = respond(tier=tier, system=instructions, messages=messages, offered=offered)
            calls_tools = any(block["type"] == "tool_use" for block in content)
            stop_reason = "tool_use" if calls_tools else "end_turn"
            usage = self._usage(instructions + json.dumps(messages), content, record.elapsed_s())
            record.answered(usage, finish_reason=stop_reason, content=content)
        return reply_from_blocks(content, stop_reason, usage)

    async def structured(
        self, *, name: str, description: str, schema: JsonObject, prompt: str, person: str
    ) -> JsonObject:
        messages: list[ModelMessage] = [{"role": "user", "content": prompt}]
        with self._call(person, f"structured.{name}", None, messages) as record:
            try:
                answer = structured_answer(name, prompt)
            except KeyError as error:
                raise ModelRejected(f'The offline stand-in has no rule for "{name}".') from error
            except ValueError as error:
                raise ModelRejected(
                    f'The offline stand-in cannot read the input of "{name}".'
                ) from error
            content: list[ContentBlock] = [{"type": "text", "text": json.dumps(answer)}]
            usage = self._usage(prompt, content, record.elapsed_s())
            record.answered(usage, finish_reason="end_turn", content=content)
            return checked_answer(name, schema, content)

    async def aclose(self) -> None:
        return None

    @staticmethod
    def _usage(request_text: str, content: list[ContentBlock], latency_s: float) -> Usage:
        return Usage(
            model=OFFLINE_MODEL,
            input_tokens=estimate_tokens(request_text),
            output_tokens=estimate_tokens(_output_text(content)),
            latency_s=latency_s,
        )
