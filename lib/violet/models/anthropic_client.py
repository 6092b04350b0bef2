"""The model interface on the `anthropic` SDK: the main model (streamed) for conversations, the
fast model for strict structured calls, with our own retries and accounting."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any, cast

import anthropic
import httpx2
from anthropic.types import ContentBlock as AnswerBlock
from anthropic.types import Message

from violet.models.accounting import (
    LEDGER,
    CallRecord,
    UsageLedger,
    model_call,
    opaque_user_id,
)
from violet.models.base import Reply, System, Tier, Tool, Usage, reply_from_blocks
from violet.models.errors import ModelError, ModelOutputInvalid, ModelRejected, ModelUnavailable
from violet.models.messages import ContentBlock, JsonObject, ModelMessage
from violet.models.retry import Backoff, is_retried, retry_after_s
from violet.models.validation import structured_input

MAIN_MAX_TOKENS = 4096
STRUCTURED_MAX_TOKENS = 2048


def tool_param(tool: Tool) -> JsonObject:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def strict_tool_param(name: str, description: str, schema: JsonObject) -> JsonObject:
    """A strict tool. The wire schema keeps only what strict mode accepts (constraints such as
    maxLength move into descriptions); the full schema is enforced when the answer returns."""
    return {
        "name": name,
        "description": description,
        "input_schema": anthropic.transform_schema(schema),
        "strict": True,
    }


def block_dict(block: AnswerBlock) -> ContentBlock:
    """An answer block as the dict to send back in the next request. A block of another kind
    (none is asked for) goes back as the API wrote it."""
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return cast(ContentBlock, block.to_dict(mode="json", exclude_none=True))


class AnthropicModelClient:
    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None,
        main_model: str,
        fast_model: str,
        timeout_s: float = 60,
        max_retries: int = 4,
        backoff: Backoff | None = None,
        ledger: UsageLedger | None = None,
        main_max_tokens: int = MAIN_MAX_TOKENS,
    ) -> None:
        # Our span covers a call with all its retries; the SDK's own would count it twice.
        self._sdk = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url or None,
            timeout=timeout_s,
            max_retries=0,
            open_telemetry=False,
        )
        url = self._sdk.base_url
        self._server = (url.host, url.port or (443 if url.scheme == "https" else 80))
        self.main_model = main_model
        self.fast_model = fast_model
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff = backoff or Backoff()
        self.ledger = ledger or LEDGER
        self.main_max_tokens = main_max_tokens

    async def reply(
        self,
        *,
        tier: Tier,
        system: System,
        messages: list[ModelMessage],
        tools: Sequence[Tool],
        person: str,
    ) -> Reply:
        params: dict[str, Any] = {
            "model": self.main_model,
            "max_tokens": self.main_max_tokens,
            "messages": messages,
            "metadata": {"user_id": opaque_user_id(person)},
        }
        if system:
            params["system"] = system
        if tools:
            params["tools"] = [tool_param(tool) for tool in tools]
        stream = tier == "main"
        with model_call(
            ledger=self.ledger,
            person=person,
            call=f"reply.{tier}",
            model=self.main_model,
            system=system,
            messages=messages,
            max_tokens=self.main_max_tokens,
            server=self._server,
        ) as record:
            message = await self._send(record, params, stream=stream)
            content = [block_dict(block) for block in message.content]
            usage = self._account(record, message, content)
        return reply_from_blocks(content, message.stop_reason or "end_turn", usage)

    async def structured(
        self, *, name: str, description: str, schema: JsonObject, prompt: str, person: str
    ) -> JsonObject:
        messages: list[ModelMessage] = [{"role": "user", "content": prompt}]
        params: dict[str, Any] = {
            "model": self.fast_model,
            "max_tokens": STRUCTURED_MAX_TOKENS,
            "messages": messages,
            "tools": [strict_tool_param(name, description, schema)],
            "tool_choice": {"type": "tool", "name": name},
            "metadata": {"user_id": opaque_user_id(person)},
        }
        with model_call(
            ledger=self.ledger,
            person=person,
            call=f"structured.{name}",
            model=self.fast_model,
            system=None,
            messages=messages,
            max_tokens=STRUCTURED_MAX_TOKENS,
            server=self._server,
        ) as record:
            message = await self._send(record, params, stream=False)
            content = [block_dict(block) for block in message.content]
            self._account(record, message, content)
            if message.stop_reason == "max_tokens":
                raise ModelOutputInvalid(f'The answer to "{name}" was cut off.')
            return structured_input(name, schema, content)

    async def aclose(self) -> None:
        await self._sdk.close()

    def _account(self, record: CallRecord, message: Message, content: list[ContentBlock]) -> Usage:
        usage = Usage(
            model=message.model,
            input_tokens=message.usage.input_tokens,
            output_tokens=message.usage.output_tokens,
            latency_s=record.elapsed_s(),
            cache_write_tokens=message.usage.cache_creation_input_tokens or 0,
            cache_read_tokens=message.usage.cache_read_input_tokens or 0,
        )
        record.answered(
            usage,
            finish_reason=message.stop_reason or "",
            content=content,
            response_id=message.id,
        )
        return usage

    async def _send(self, record: CallRecord, params: JsonObject, *, stream: bool) -> Message:
        request: Callable[[], Awaitable[Message]]
        if stream:
            request = partial(self._streamed, params)
        else:
            request = partial(self._sdk.messages.create, **params)
        attempts = 0
        while True:
            attempts += 1
            record.attempts = attempts
            try:
                return await request()
            except (anthropic.AnthropicError, httpx2.TransportError) as error:
                if attempts > self.max_retries or not is_retried(error):
                    raise self._failure(error, attempts) from error
                await asyncio.sleep(self.backoff.delay(attempts - 1, retry_after_s(error)))

    async def _streamed(self, params: JsonObject) -> Message:
        async with self._sdk.messages.stream(**params) as stream:
            try:
                return await stream.get_final_message()
            except ValueError as error:
                # the stream helper raises a bare ValueError on tool input that is not JSON
                malformed = "The streamed answer held malformed tool input."
                raise ModelOutputInvalid(malformed) from error

    def _failure(self, error: Exception, attempts: int) -> ModelError:
        status = getattr(error, "status_code", None)
        tries = f"gave up after {attempts} {'try' if attempts == 1 else 'tries'}"
        if isinstance(error, anthropic.APITimeoutError | httpx2.TimeoutException):
            return ModelUnavailable(
                f"The answering service did not answer within {self.timeout_s:g} s; {tries}.",
                attempts=attempts,
            )
        if isinstance(error, anthropic.APIConnectionError | httpx2.TransportError):
            return ModelUnavailable(
                f"The answering service could not be reached; {tries}.", attempts=attempts
            )
        if isinstance(error, anthropic.APIStatusError):
            detail = error.api_message or error.type or "no detail"
            if is_retried(error):
                return ModelUnavailable(
                    f"The answering service is overloaded or failing (HTTP {status}: {detail}); "
                    f"{tries}.",
                    attempts=attempts,
                    status_code=status,
                )
            return ModelRejected(
                f"The answering service refused the request (HTTP {status}): {detail}",
                attempts=attempts,
                status_code=status,
            )
        if isinstance(error, anthropic.APIResponseValidationError):
            return ModelOutputInvalid(
                "The answering service sent a response of an unexpected shape.",
                attempts=attempts,
                status_code=status,
            )
        return ModelError(f"The call to the answering service failed: {error}", attempts=attempts)
