"""The model interface on the `anthropic` SDK, valid for the 5.5 models as documented
(`docs/model-rules.md`): adaptive thinking with an effort per kind of call, structured answers
through `output_config.format`, conversations streamed, every stop reason handled, retries as
the service asks in one loop here (the SDK's own are off), and every call accounted."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, cast

import anthropic
import httpx2
from anthropic.types import ContentBlock as AnswerBlock
from anthropic.types import Message

from violet.fallbacks import fallback
from violet.metrics import MODEL_RETRIES
from violet.models.accounting import (
    LEDGER,
    CallRecord,
    UsageLedger,
    current_pseudonym,
    model_call,
)
from violet.models.base import Reply, System, Tier, Tool, ToolChoice, Usage, reply_from_blocks
from violet.models.errors import (
    KeyRefused,
    ModelContextFull,
    ModelError,
    ModelOutputInvalid,
    ModelRefused,
    ModelRejected,
    ModelUnavailable,
    ModelUnreachable,
    SpendLimitReached,
)
from violet.models.messages import ContentBlock, JsonObject, ModelMessage
from violet.models.policy import MAX_OUTPUT_TOKENS, POLICIES, CallKind, CallPolicy
from violet.models.prices import priced
from violet.models.retry import Backoff, is_retried, is_spend_limit, retry_after_s
from violet.models.validation import structured_answer

DEFAULT_BASE_URL = "https://api.anthropic.com"
# authentication_error, billing_error, permission_error: the key's account said no.
KEY_REFUSED_STATUSES = frozenset({401, 402, 403})
ADAPTIVE: JsonObject = {"type": "adaptive"}
# A paused turn (a long server-side loop) is sent back to go on; a bound keeps it finite.
MAX_PAUSES = 3
# A reply cut at its length limit is asked to go on from where it stopped, this many times.
MAX_CONTINUATIONS = 2
CONTINUE = (
    "Your answer was cut off at its length limit. Continue it exactly where it stopped, "
    "without repeating anything."
)


def tool_param(tool: Tool) -> JsonObject:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def block_dict(block: AnswerBlock) -> ContentBlock | None:
    """An answer block as the dict to send back in the next request, or None for an empty text
    block (the API refuses those). Thinking blocks go back exactly as they came."""
    if block.type == "text":
        return {"type": "text", "text": block.text} if block.text.strip() else None
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if block.type == "thinking":
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    return cast(ContentBlock, block.to_dict(mode="json", exclude_none=True))


def blocks_of(message: Message) -> list[ContentBlock]:
    return [made for made in map(block_dict, message.content) if made is not None]


def is_cut(content: list[ContentBlock]) -> bool:
    """Whether a reply stopped at its limit holds nothing to go on from: a tool call (whose
    input may be cut, so it is never run) or no words at all."""
    has_call = any(b["type"] == "tool_use" for b in content)
    has_words = any(b["type"] == "text" for b in content)
    return has_call or not has_words


@dataclass
class CallBudget:
    """One call's time: its requests, and the waits between them, end by `until` (monotonic).
    A request may take the policy's attempt time, longer in proportion to the room it asks
    (`max_tokens`): an answer asked again with twice the room may take twice as long to write."""

    policy: CallPolicy
    started: float
    until: float

    @classmethod
    def of(cls, policy: CallPolicy) -> CallBudget:
        now = time.monotonic()
        return cls(policy, now, now + policy.budget_s)

    def attempt_s(self, params: dict[str, Any]) -> float:
        """How long the next request may take: its share, within what is left of the call."""
        return max(0.0, min(self._share_s(params), self.left_s()))

    def grow_for(self, params: dict[str, Any]) -> None:
        """Time for one more request of this size, past what is left."""
        self.until = max(self.until, time.monotonic()) + self._share_s(params)

    def _share_s(self, params: dict[str, Any]) -> float:
        return self.policy.attempt_s * max(1.0, params["max_tokens"] / self.policy.max_tokens)

    def left_s(self) -> float:
        return self.until - time.monotonic()

    def spent_s(self) -> float:
        return time.monotonic() - self.started


class AnthropicModelClient:
    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None,
        main_model: str,
        fast_model: str,
        policies: dict[CallKind, CallPolicy] | None = None,
        backoff: Backoff | None = None,
        ledger: UsageLedger | None = None,
    ) -> None:
        # An empty address is no address: the SDK would read an empty one from the environment.
        self._sdk = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url or DEFAULT_BASE_URL,
            max_retries=0,
            open_telemetry=False,
        )
        url = self._sdk.base_url
        self._server = (url.host, url.port or (443 if url.scheme == "https" else 80))
        self.main_model = main_model
        self.fast_model = fast_model
        self.policies = dict(policies or POLICIES)
        self.backoff = backoff or Backoff()
        self.ledger = ledger or LEDGER

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
        policy = self.policies[tier]
        params = self._params(self.main_model, policy, messages)
        if system:
            params["system"] = system
        if tools:
            params["tools"] = [tool_param(tool) for tool in tools]
            params["tool_choice"] = {"type": tool_choice}
        budget = CallBudget.of(policy)
        with self._call(
            person, f"reply.{tier}", self.main_model, system, messages, policy
        ) as record:
            message = await self._send(record, params, budget)
            content, stop = await self._resume_paused(record, params, budget, message)
            if stop == "max_tokens":
                # The room ran out (thinking counts toward it): once more with twice the room,
                # and the time to write it.
                params["max_tokens"] = min(2 * params["max_tokens"], MAX_OUTPUT_TOKENS)
                budget.grow_for(params)
                message = await self._send(record, params, budget)
                content, stop = await self._resume_paused(record, params, budget, message)
            if stop == "max_tokens":
                if is_cut(content):
                    raise ModelOutputInvalid("The answer was cut off before it said anything.")
                content, stop = await self._continue(record, params, budget, content)
            return reply_from_blocks(content, stop, cast(Usage, record.usage))

    async def structured(
        self, *, name: str, description: str, schema: JsonObject, prompt: str, person: str
    ) -> JsonObject:
        policy = self.policies["structured"]
        messages: list[ModelMessage] = [{"role": "user", "content": prompt}]
        params = self._params(self.fast_model, policy, messages)
        params["system"] = description
        params["output_config"]["format"] = {
            "type": "json_schema",
            "schema": anthropic.transform_schema(schema),
        }
        call = f"structured.{name}"
        # Every request of a structured call fits its budget, which fits the deadline of the call
        # between services it runs in (the routing pick's): never grown.
        budget = CallBudget.of(policy)
        with self._call(person, call, self.fast_model, description, messages, policy) as record:
            try:
                message = await self._structured_answer(record, params, budget)
            except ModelRefused as refused:
                # The fast model has no fallback of its own; the main model reads the same.
                fallback("refusal_on_main_model", str(refused), call=call)
                params["model"] = self.main_model
                message = await self._structured_answer(record, params, budget)
            return structured_answer(name, schema, blocks_of(message))

    async def aclose(self) -> None:
        await self._sdk.close()

    # --- one call ------------------------------------------------------------------------

    def _params(
        self, model: str, policy: CallPolicy, messages: list[ModelMessage]
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": model,
            "max_tokens": policy.max_tokens,
            "messages": messages,
            "thinking": {**ADAPTIVE, "display": policy.display},
            "output_config": {"effort": policy.effort},
        }
        # The person's pseudonym, never their name: what Anthropic may use to tell one user's
        # traffic from another's. A call for nobody's account (a key's check) names no one.
        if pseudonym := current_pseudonym():
            params["metadata"] = {"user_id": pseudonym}
        return params

    def _call(
        self,
        person: str,
        call: str,
        model: str,
        system: System | None,
        messages: list[ModelMessage],
        policy: CallPolicy,
    ) -> AbstractContextManager[CallRecord]:
        return model_call(
            ledger=self.ledger,
            person=person,
            call=call,
            model=model,
            system=system,
            messages=messages,
            max_tokens=policy.max_tokens,
            server=self._server,
        )

    async def _structured_answer(
        self, record: CallRecord, params: dict[str, Any], budget: CallBudget
    ) -> Message:
        message = await self._send(record, params, budget)
        if message.stop_reason == "max_tokens":
            params = {**params, "max_tokens": min(2 * params["max_tokens"], MAX_OUTPUT_TOKENS)}
            message = await self._send(record, params, budget)
            if message.stop_reason == "max_tokens":
                raise ModelOutputInvalid("The structured answer was cut off at its length limit.")
        return message

    async def _resume_paused(
        self, record: CallRecord, params: dict[str, Any], budget: CallBudget, message: Message
    ) -> tuple[list[ContentBlock], str]:
        """The whole answer of a turn the API paused, sent back as it is to go on."""
        content, stop = blocks_of(message), message.stop_reason or "end_turn"
        for _ in range(MAX_PAUSES):
            if stop != "pause_turn":
                break
            resumed = {**params, "messages": [*params["messages"], _assistant(content)]}
            message = await self._send(record, resumed, budget)
            content, stop = [*content, *blocks_of(message)], message.stop_reason or "end_turn"
        if stop == "pause_turn":
            raise ModelUnavailable("The answer stayed paused after every continuation.")
        return content, stop

    async def _continue(
        self,
        record: CallRecord,
        params: dict[str, Any],
        budget: CallBudget,
        content: list[ContentBlock],
    ) -> tuple[list[ContentBlock], str]:
        """A reply in words cut at its length limit, asked to go on in words; the text of every
        part together, and the last part's stop reason ("max_tokens" if it never finished)."""
        words = [b["text"] for b in content if b["type"] == "text"]
        messages, stop = list(params["messages"]), "max_tokens"
        for _ in range(MAX_CONTINUATIONS):
            messages += [_assistant(content), {"role": "user", "content": CONTINUE}]
            more = {**params, "messages": messages}
            if "tools" in more:
                more["tool_choice"] = {"type": "none"}
            message = await self._send(record, more, budget)
            content, stop = blocks_of(message), message.stop_reason or "end_turn"
            words += [b["text"] for b in content if b["type"] == "text"]
            if stop != "max_tokens":
                break
        return [{"type": "text", "text": "".join(words)}], stop

    # --- one request, with its retries -----------------------------------------------------

    async def _send(
        self, record: CallRecord, params: dict[str, Any], budget: CallBudget
    ) -> Message:
        """One answer, tried again as the service asks within the call's budget; refusals
        and a full context raise here, so no caller reads an answer that is not one."""
        policy = budget.policy
        tries = 0
        while True:
            tries += 1
            record.attempts += 1
            attempt_s = budget.attempt_s(params)
            try:
                async with asyncio.timeout(attempt_s):
                    message = await self._request(params, policy, attempt_s)
            except (anthropic.AnthropicError, httpx2.TransportError, TimeoutError) as error:
                wait = self._wait_before_retry(error, tries, budget)
                if wait is None:
                    raise self._failure(error, tries, policy) from error
                MODEL_RETRIES.add(1, {"violet.model.call": record.call, "error.type": _kind(error)})
                await asyncio.sleep(wait)
                continue
            self._account(record, message)
            return _checked(message, tries)

    def _wait_before_retry(self, error: Exception, tries: int, budget: CallBudget) -> float | None:
        """How long to wait before the next try; None when there is none to make."""
        if not is_retried(error):
            return None
        wait = self.backoff.delay(tries - 1, retry_after_s(error))
        spent = budget.spent_s()
        if tries >= budget.policy.attempts or wait >= budget.left_s():
            fallback(
                "retry_budget_spent",
                f"{_kind(error)} after {tries} tries in {spent:.1f} s, next wait {wait:.1f} s",
            )
            return None
        return wait

    async def _request(
        self, params: dict[str, Any], policy: CallPolicy, attempt_s: float
    ) -> Message:
        timeout = httpx2.Timeout(attempt_s, connect=5.0, read=min(policy.idle_s, attempt_s))
        if not policy.stream:
            return await self._sdk.messages.create(**params, timeout=timeout)
        async with self._sdk.messages.stream(**params, timeout=timeout) as stream:
            try:
                return await stream.get_final_message()
            except ValueError as error:
                # the stream helper raises a bare ValueError on tool input that is not JSON
                malformed = "The streamed answer held malformed tool input."
                raise ModelOutputInvalid(malformed) from error

    def _account(self, record: CallRecord, message: Message) -> None:
        usage = priced(
            Usage(
                model=message.model,
                input_tokens=message.usage.input_tokens,
                output_tokens=message.usage.output_tokens,
                latency_s=record.elapsed_s(),
                cache_write_tokens=message.usage.cache_creation_input_tokens or 0,
                cache_read_tokens=message.usage.cache_read_input_tokens or 0,
                cache_write_1h_tokens=(
                    message.usage.cache_creation.ephemeral_1h_input_tokens
                    if message.usage.cache_creation is not None
                    else 0
                ),
            )
        )
        record.answered(
            usage,
            finish_reason=message.stop_reason or "",
            content=blocks_of(message),
            response_id=message.id,
        )

    def _failure(self, error: Exception, attempts: int, policy: CallPolicy) -> ModelError:
        status = getattr(error, "status_code", None)
        tries = f"gave up after {attempts} {'try' if attempts == 1 else 'tries'}"
        if isinstance(error, anthropic.APITimeoutError | httpx2.TimeoutException | TimeoutError):
            return ModelUnavailable(
                f"The answering service did not answer within {policy.attempt_s:g} s; {tries}.",
                attempts=attempts,
            )
        if isinstance(error, anthropic.APIConnectionError | httpx2.TransportError):
            return ModelUnreachable(
                f"The answering service could not be reached; {tries}.", attempts=attempts
            )
        if isinstance(error, anthropic.APIStatusError):
            detail = error.message if error.message else (error.type or "no detail")
            if is_spend_limit(error):
                return SpendLimitReached(
                    f"The paying account reached a spending limit (HTTP {status}): {detail}",
                    attempts=attempts,
                    status_code=status,
                )
            if status is None or status == 429 or status >= 500 or status < 400:
                return ModelUnavailable(
                    f"The answering service is busy or failing (HTTP {status}: {detail}); {tries}.",
                    attempts=attempts,
                    status_code=status,
                )
            if status in KEY_REFUSED_STATUSES:
                return KeyRefused(
                    f"The key was refused (HTTP {status}: {error.type or detail})",
                    attempts=attempts,
                    status_code=status,
                )
            return ModelRejected(
                f"The answering service refused the request (HTTP {status}): {detail}",
                attempts=attempts,
                status_code=status,
            )
        return ModelError(f"The call to the answering service failed: {error}", attempts=attempts)


def _assistant(content: list[ContentBlock]) -> ModelMessage:
    return {"role": "assistant", "content": content}


def _kind(error: Exception) -> str:
    kind = getattr(error, "type", None)
    return kind if isinstance(kind, str) and kind else type(error).__name__


def _checked(message: Message, attempts: int) -> Message:
    if message.stop_reason == "refusal":
        details = message.stop_details
        category = details.category if details is not None else None
        raise ModelRefused(
            f"The model declined to answer ({category or 'no reason given'}).",
            category=category,
            attempts=attempts,
        )
    if message.stop_reason == "model_context_window_exceeded":
        raise ModelContextFull(
            "The conversation filled the model's context window.", attempts=attempts
        )
    return message
