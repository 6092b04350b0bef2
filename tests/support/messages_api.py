"""A local server that speaks the Anthropic Messages API, for tests: a strict stand-in for the
documented rules of `claude-opus-5-5` and `claude-haiku-5-5`.

`POST /v1/messages`, streaming (SSE, the same events as the API) and not, with the API's JSON
error shape. Model names starting with `claude-haiku` get the Haiku 5.5 rules, every other name
the Opus 5.5 rules; `docs/model-rules.md` lists each rule with the page that states it. A request
a rule refuses gets the API's 400 and is recorded as rejected (`rejections()`), so a test suite
can fail every test that sent one.

It answers from a queue of canned responses a test sets (`push` of `text`, `tool_call`, `error`,
`overloaded`, `rate_limited`, `server_error`, `invalid_request`, `spend_limit_reached`,
`usage_limits_reached`, `stall`, `cut`, `refusal`, `paused`, `context_exceeded`), ahead of which
`fail_every(n, canned)` answers every n-th valid request and `fail_tool(name)` fails a structured
call; when the queue is empty, it answers by running the offline model's rules on the request (a
structured output by the offline model's structured rules, told apart by the schema's top-level
property names), so a whole stack can run in the Anthropic mode against it. It records every
request (JSON body and headers) with the status and usage it answered.

Thinking is adaptive and on by default, so an answer starts with a thinking block (empty under
the default display "omitted"), except on Haiku rules with a forced tool or thinking turned off.
Each thinking block's signature is an HMAC over the prefix it was made after (the rule family,
tools, system and every earlier block, without `cache_control` and empty text blocks), and the
server remembers that prefix by signature: a block sent back after another prefix is refused as
bound to a different conversation, and a tool loop must send its turn back as it was issued.

Prompt caching works as the API's does, so tests can assert cache reads: each block marked with
`cache_control` (at most 4) ends a prefix (tools, system, messages) that is cached for its
lifetime (5 minutes, or `"ttl": "1h"`) from its last use, once it is at least
`min_cacheable_tokens` long (512 on the 5.5 models); a later request reads back the longest
cached prefix that ends at one of its breakpoints or up to 20 blocks before one. `usage` then
splits the prompt into `cache_read_input_tokens`, `cache_creation_input_tokens` and
`input_tokens` (the rest). Tokens are estimated as the newer tokenizer counts, about 30% more
than a quarter of the characters. `advance_clock(s)` moves the cache's time on.

A promise script (`promise_script(every, keeps)`) makes the main model record a promise on every
`every`-th of the person's turns and, when it keeps them, keep the oldest one listed in Open items
on the turn before each new one; other calls follow the queue and the rules as before.

In a test:

    from tests.support import messages_api as api_support

    messages_api_server = api_support.messages_api_server  # the fixtures
    messages_api = api_support.messages_api

    async def test_x(messages_api):
        messages_api.push(overloaded(), text("hello"))
        client = make_model_client(api_key="test", base_url=messages_api.url, ...)

As a process (for services started as subprocesses): `python -m tests.support.messages_api
--port 0` prints `listening on http://127.0.0.1:PORT` once it accepts requests. There the queue
and the records are reached over HTTP: `POST /_control/queue` with a JSON list of response specs
(`canned_from_spec`), `GET /_control/requests`, `GET /_control/rejections`,
`POST /_control/reset`, `POST /_control/failing` (`{"tool": name, "status": S}`; status 0 heals),
`POST /_control/every` (`{"every": N, "spec": {...}}`; `every` 0 stops it),
`POST /_control/keys` (`{"key": K, "status": 401|402|403}`; status 0 accepts it again),
`POST /_control/clock` (`{"advance_s": S}`), `POST /_control/promises` (`{"every": N,
"keeps": bool}`; `every` 0 stops it), `POST /_control/pace` (`{"stall_s": S}`: every answer
waits S seconds first, as a busy API does; 0 stops it) and `POST /_control/thinking`
(`{"skipped": bool}`: answers without a thinking block, as adaptive thinking may give).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import copy
import hashlib
import hmac
import json
import math
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable, Collection, Iterator
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import get_args

import httpx
import pytest
import uvicorn
from anthropic.types.model_param import ModelParam
from jiter import from_json
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from violet.models import tools as violet_tools
from violet.models.offline_rules import open_items, respond
from violet.models.offline_structured import structured_answer
from violet.models.offline_text import block_text, estimate_tokens
from violet.models.structured import FOLD, ORIGIN, PICK

_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_WORK_TOOLS = {tool.name for tool in violet_tools.WORK_TOOLS}

MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20
MIN_CACHEABLE_TOKENS = 512
TTL_S = {"5m": 300.0, "1h": 3600.0}

OPUS = "opus-5-5"
HAIKU = "haiku-5-5"
MAX_OUTPUT_TOKENS = 128_000
EFFORTS = ("low", "medium", "high", "xhigh", "max")
DISPLAYS = ("omitted", "summarized")
FORCED = ("any", "tool")
THINKING_TYPES = ("thinking", "redacted_thinking")
THINKING_TOKENS = 16  # what each thinking block adds to output_tokens
THINKING_SUMMARY = "Weighed the request and settled on how to answer it."
SUMMARY_EVERY_S = 5.0  # how often a long think streams a piece of its summary
MAX_STRICT_TOOLS = 20
MAX_OPTIONAL_PROPERTIES = 24
MAX_UNION_PROPERTIES = 16
UNSUPPORTED_KEYWORDS = (
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "maxItems",
    "uniqueItems",
)
# The keyword arguments of `messages.create` in the installed SDK, and the sampling parameters
# the rules judge themselves.
KNOWN_KEYS = frozenset(
    {
        "max_tokens",
        "messages",
        "model",
        "cache_control",
        "container",
        "diagnostics",
        "inference_geo",
        "metadata",
        "output_config",
        "service_tier",
        "speed",
        "stop_sequences",
        "stream",
        "system",
        "thinking",
        "tool_choice",
        "tools",
        "user_profile_id",
        "workspace_id",
        "temperature",
        "top_p",
        "top_k",
    }
)
BETA_DISPLAY_UPDATES = "thinking-display-updates-2026-08-18"
BETA_BINDING = "thinking-binding-controls-2026-08-01"
BETA_OUTPUT_FORMAT = "structured-outputs-2025-11-13"

FORCED_TOOL = 'tool_choice: type "tool" and "any" are not supported for this model.'
THINKING_TYPE = (
    '"thinking.type.{}" is not supported for this model. Use "thinking.type.adaptive" and '
    '"output_config.effort" to control thinking behavior.'
)
PREFILL = (
    "This model does not support assistant message prefill. The conversation must end with a "
    "user message."
)
TOOLS_NEEDED = "Requests which include `tool_use` or `tool_result` blocks must define tools."
INVALID_SIGNATURE = "Invalid `signature` in `thinking` block"
BOUND_ELSEWHERE = (
    "Invalid `signature` in `thinking` block. The block is bound to a different conversation. "
    'Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".'
)
BINDING_NEEDS_BETA = (
    f" That setting requires the `{BETA_BINDING}` value in the `anthropic-beta` header."
)
MODIFIED = (
    "`thinking` or `redacted_thinking` blocks in the latest assistant message cannot be "
    "modified. These blocks must remain as they were in the original response."
)

# The offline model's structured calls, told apart by the top-level properties of their schemas.
STRUCTURED_CALLS = {
    frozenset({"summary", "open_promises", "kept"}): FOLD,
    frozenset({"choice", "confidence", "reason"}): PICK,
    frozenset({"items"}): ORIGIN,
}


# The model ids the API knows, as the installed SDK lists them: a `claude-` name outside them is
# not found (404), as on the API; other names (`m` in the server's own tests) pass, for brevity.
KNOWN_MODELS = frozenset(get_args(get_args(ModelParam)[0]))


def check_model_exists(body: dict) -> None:
    model = str(body.get("model"))
    if model.startswith("claude-") and model not in KNOWN_MODELS:
        raise ApiError(404, "not_found_error", f"model: {model}")


def rules_for(model: object) -> str:
    """The rules a model name gets: Haiku 5.5's for `claude-haiku*`, Opus 5.5's otherwise."""
    return HAIKU if str(model).startswith("claude-haiku") else OPUS


def count_tokens(text: str) -> int:
    """Tokens as the newer tokenizer counts them: about 30% more than characters / 4 (the same
    estimate the offline model and the benchmarks use)."""
    return estimate_tokens(text)


# --- scripted answers --------------------------------------------------------------------------


@dataclass
class Canned:
    """One scripted answer: a message (content blocks) or an API error, optionally after a
    stall. `mid_stream` sends the error inside a started stream instead of as the status;
    `stream_pause_s` pauses a stream after its first events. `retry_after_s`,
    `retry_after_ms` and `should_retry` set the `retry-after`, `retry-after-ms` and
    `x-should-retry` headers of an error. `cut_json` is what a stream sends of the input of a
    cut `tool_use` (the last block). `thinks` False: adaptive thinking chose not to think, and
    the answer has no thinking block. `think_s`: how long the thinking takes; under the
    `summarized` display a piece of its summary streams every `summary_every_s`, under
    `omitted` nothing is sent between the thinking block's start and its signature."""

    content: list[dict] = field(default_factory=list)
    stop_reason: str | None = None
    stop_details: dict | None = None
    error: tuple[int, str, str] | None = None
    stall_s: float = 0.0
    mid_stream: bool = False
    retry_after_s: float | None = None
    retry_after_ms: float | None = None
    should_retry: bool | None = None
    stream_pause_s: float = 0.0
    cut_json: str | None = None
    # An error's `error.details.error_code` (`enforced_spend_limit_reached`, ...).
    error_code: str | None = None
    thinks: bool = True
    think_s: float = 0.0
    summary_every_s: float = SUMMARY_EVERY_S


def text(words: str, **options: object) -> Canned:
    return Canned(content=[{"type": "text", "text": words}], **options)


def _tool_block(name: str, tool_input: dict) -> dict:
    return {
        "type": "tool_use",
        "id": f"toolu_{uuid.uuid4().hex[:24]}",
        "name": name,
        "input": tool_input,
    }


def tool_call(name: str, tool_input: dict, *, before: str = "", **options: object) -> Canned:
    content = [{"type": "text", "text": before}] if before else []
    content.append(_tool_block(name, tool_input))
    return Canned(content=content, **options)


def error(status: int, kind: str, message: str, **options: object) -> Canned:
    return Canned(error=(status, kind, message), **options)


def spend_limit_reached(code: str = "enforced_spend_limit_reached") -> Canned:
    """The paying organisation crossed its tier's monthly cap (or its contract's): a 429 whose
    `error.details.error_code` says so, with no retry-after (https://platform.claude.com/docs/
    en/api/errors)."""
    return Canned(
        error=(429, "rate_limit_error", "Your organization has reached its spend limit."),
        error_code=code,
    )


def usage_limits_reached() -> Canned:
    """The spending limit the organisation set for itself: a 400 that says when access resumes."""
    return invalid_request(
        "You have reached your specified API usage limits. You will regain access on "
        "2027-01-01 at 00:00 UTC."
    )


def overloaded(**options: object) -> Canned:
    return error(529, "overloaded_error", "Overloaded", **options)


def rate_limited(**options: object) -> Canned:
    """A 429; give `retry_after_s` and/or `retry_after_ms` for the headers that say when."""
    return error(
        429, "rate_limit_error", "Number of requests has exceeded your rate limit", **options
    )


def server_error(**options: object) -> Canned:
    return error(500, "api_error", "Internal server error", **options)


def invalid_request(message: str, **options: object) -> Canned:
    return error(400, "invalid_request_error", message, **options)


def stall(seconds: float) -> Canned:
    """No answer for `seconds` (the client times out first), then a short text."""
    return text("late", stall_s=seconds)


def cut(
    words: str | None = None,
    *,
    tool: str | None = None,
    tool_input: dict | None = None,
    **options: object,
) -> Canned:
    """An answer stopped by `max_tokens`: a text ending in `words`, or a call of `tool` whose
    input stops half way (streamed as partial JSON that ends mid-way; not streamed, as the
    partial object), or, with neither, only the thinking block (all the budget spent on it)."""
    if tool is not None:
        whole = json.dumps(tool_input or {})
        partial = whole[: max(1, len(whole) // 2)]
        block = _tool_block(tool, from_json(partial.encode(), partial_mode=True))
        return Canned(content=[block], stop_reason="max_tokens", cut_json=partial, **options)
    content = [{"type": "text", "text": words}] if words else []
    return Canned(content=content, stop_reason="max_tokens", **options)


def refusal(category: str = "cyber", explanation: str | None = None, **options: object) -> Canned:
    """A refusal before any output: HTTP 200, no content, no output tokens, and the category in
    `stop_details`."""
    details = {
        "type": "refusal",
        "category": category,
        "explanation": explanation or f"The request was declined by the {category} classifier.",
    }
    return Canned(content=[], stop_reason="refusal", stop_details=details, **options)


def paused(words: str, **options: object) -> Canned:
    """A turn paused by the server (`pause_turn`); sending it back as the last assistant message
    continues it."""
    return text(words, stop_reason="pause_turn", **options)


def context_exceeded(words: str, **options: object) -> Canned:
    """An answer cut where the context window filled up."""
    return text(words, stop_reason="model_context_window_exceeded", **options)


def canned_from_spec(spec: dict) -> Canned:
    """A canned answer from its JSON form: `{"text": ..., "stop_reason"?}`,
    `{"tool_use": {"name", "input"}, "text"?}`, `{"content": [...], "stop_reason"?}`,
    `{"error": {"status", "type", "message"?}}`, `{"refusal": category or {"category",
    "explanation"}}`, `{"cut": {"text"} or {"tool_use": {"name", "input"}} or {}}`, each with
    optional `stall_s`, `mid_stream`, `stream_pause_s`, `thinks`, `think_s`, `summary_every_s`,
    `retry_after_s`, `retry_after_ms` and `should_retry`."""
    options: dict = {
        "stall_s": float(spec.get("stall_s", 0.0)),
        "mid_stream": bool(spec.get("mid_stream", False)),
        "stream_pause_s": float(spec.get("stream_pause_s", 0.0)),
        "thinks": bool(spec.get("thinks", True)),
        "think_s": float(spec.get("think_s", 0.0)),
        "summary_every_s": float(spec.get("summary_every_s", SUMMARY_EVERY_S)),
        "retry_after_s": spec.get("retry_after_s"),
        "retry_after_ms": spec.get("retry_after_ms"),
        "should_retry": spec.get("should_retry"),
    }
    if "error" in spec:
        e = spec["error"]
        made = error(int(e["status"]), e["type"], e.get("message", e["type"]), **options)
        made.error_code = e.get("error_code")
        return made
    if "refusal" in spec:
        given = spec["refusal"]
        details = given if isinstance(given, dict) else {"category": given or "cyber"}
        return refusal(details.get("category", "cyber"), details.get("explanation"), **options)
    if "cut" in spec:
        wanted = spec["cut"] or {}
        call = wanted.get("tool_use")
        if call:
            return cut(tool=call["name"], tool_input=call.get("input", {}), **options)
        return cut(wanted.get("text"), **options)
    if "tool_use" in spec:
        call = spec["tool_use"]
        return tool_call(
            call["name"], call.get("input", {}), before=spec.get("text", ""), **options
        )
    if "content" in spec:
        return Canned(content=spec["content"], stop_reason=spec.get("stop_reason"), **options)
    return text(spec.get("text", ""), stop_reason=spec.get("stop_reason"), **options)


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict
    usage: dict | None = None  # what the answer said it used; None for a refused request
    status: int = 0  # the HTTP status answered; 0 while the answer is being made
    # Why a rule refused the request (or the server itself failed); never a scripted error.
    rejected: str | None = None


class ApiError(Exception):
    """An error answer; `rule` when a rule of the API refused the request."""

    def __init__(self, status: int, kind: str, message: str, *, rule: bool = True) -> None:
        super().__init__(message)
        self.status, self.kind, self.message, self.rule = status, kind, message, rule


def _invalid(message: str) -> ApiError:
    return ApiError(400, "invalid_request_error", message)


def error_response(
    status: int,
    kind: str,
    message: str,
    retry_after_s: float | None = None,
    retry_after_ms: float | None = None,
    should_retry: bool | None = None,
    error_code: str | None = None,
) -> JSONResponse:
    request_id = f"req_{uuid.uuid4().hex[:24]}"
    headers = {"request-id": request_id}
    if retry_after_s is not None:
        headers["retry-after"] = f"{retry_after_s:g}"
    if retry_after_ms is not None:
        headers["retry-after-ms"] = f"{retry_after_ms:g}"
    if should_retry is not None:
        headers["x-should-retry"] = "true" if should_retry else "false"
    said: dict = {"type": kind, "message": message}
    if error_code is not None:
        said["details"] = {"error_code": error_code}
    body = {"type": "error", "error": said, "request_id": request_id}
    return JSONResponse(body, status_code=status, headers=headers)


# How the API says no to a key, by status (https://platform.claude.com/docs/en/api/errors).
KEY_REFUSALS = {
    401: ("authentication_error", "invalid x-api-key"),
    402: ("billing_error", "Your credit balance is too low to access the Anthropic API."),
    403: ("permission_error", "Your API key does not have permission to use this resource."),
}


def key_of(headers: dict[str, str] | Headers) -> str | None:
    """The key a request was made with: `x-api-key`, or a bearer token."""
    given = headers.get("x-api-key")
    bearer = headers.get("authorization", "")
    if not given and bearer.lower().startswith("bearer "):
        given = bearer[7:].strip()
    return given or None


def _authenticate(request: Request, api_key: str | None, refused: dict[str, int]) -> None:
    given = key_of(request.headers)
    if not given:
        raise ApiError(401, "authentication_error", "x-api-key header is required", rule=False)
    if api_key is not None and given != api_key:
        raise ApiError(401, "authentication_error", "invalid x-api-key", rule=False)
    if given in refused:
        status = refused[given]
        raise ApiError(status, *KEY_REFUSALS[status], rule=False)


def betas_of(request: Request) -> frozenset[str]:
    """The values of the request's `anthropic-beta` headers."""
    values = ",".join(request.headers.getlist("anthropic-beta"))
    return frozenset(v.strip() for v in values.split(",") if v.strip())


# --- the rules a request must keep (those that need no memory of earlier answers) ------------


def validate(body: object, betas: frozenset[str] = frozenset()) -> dict:
    """The checks of the real API that need no earlier answers, with its wording where the docs
    give it. Raises ApiError (400) on the first one broken."""
    if not isinstance(body, dict):
        raise _invalid("The request body is not a JSON object.")
    for key, kind in (("model", str), ("max_tokens", int), ("messages", list)):
        if not isinstance(body.get(key), kind):
            raise _invalid(f"{key}: Field required")
    family = rules_for(body["model"])
    _check_keys(body, betas)
    _check_max_tokens(body)
    _check_sampling(body, family)
    _check_output_config(body)
    _check_thinking(body, family, betas)
    names = _check_tools(body)
    _check_tool_choice(body, family, names)
    _check_messages(body)
    _check_system(body)
    _check_breakpoints(body)
    _check_structured(body)
    return body


def _check_keys(body: dict, betas: frozenset[str]) -> None:
    known = KNOWN_KEYS | ({"output_format"} if BETA_OUTPUT_FORMAT in betas else set())
    for key in body:
        if key == "output_format" and key not in known:
            raise _invalid(
                "output_format: Extra inputs are not permitted. The deprecated `output_format` "
                f"needs the `{BETA_OUTPUT_FORMAT}` beta; use `output_config.format` instead."
            )
        if key not in known:
            raise _invalid(f"{key}: Extra inputs are not permitted")


def _check_max_tokens(body: dict) -> None:
    wanted = body["max_tokens"]
    if wanted == 0:  # pre-warming the cache: the prompt is read and written, nothing answered
        _check_prewarm(body)
        return
    if wanted < 0:
        raise _invalid("max_tokens: must be at least 0")
    if wanted > MAX_OUTPUT_TOKENS:
        raise _invalid(
            f"max_tokens: {wanted} > {MAX_OUTPUT_TOKENS}, which is the maximum allowed number "
            f"of output tokens for {body['model']}"
        )


def _check_prewarm(body: dict) -> None:
    if body.get("stream"):
        raise _invalid("max_tokens: 0 cannot be used with streaming")
    if output_format(body) is not None:
        raise _invalid("max_tokens: 0 cannot be used with structured outputs")


def prewarms(body: dict) -> bool:
    """Whether a request only writes its prompt to the cache (`max_tokens: 0`)."""
    return body.get("max_tokens") == 0


def _check_sampling(body: dict, family: str) -> None:
    given = _set({key: body.get(key) for key in ("temperature", "top_p", "top_k")})
    if family == OPUS:
        if given:
            raise _invalid(f'"{next(iter(given))}" is not supported for this model. Leave it out.')
        return
    if "top_k" in given:
        raise _invalid('"top_k" is not supported for this model. Leave it out.')
    if "temperature" in given and "top_p" in given:
        raise _invalid(
            "`temperature` and `top_p` cannot both be specified for this model. "
            "Please use only one."
        )
    if "temperature" in given and given["temperature"] != 1:
        raise _invalid("temperature: this model accepts only 1 (or leave it out)")
    if "top_p" in given and given["top_p"] != 0.99:
        raise _invalid("top_p: this model accepts only 0.99 (or leave it out)")


def _set(config: dict) -> dict:
    """A config object without its null fields (the API reads null as left out)."""
    return {key: value for key, value in config.items() if value is not None}


def _effort(body: dict) -> str:
    return _set(body.get("output_config") or {}).get("effort", "medium")


def _check_output_config(body: dict) -> None:
    config = body.get("output_config")
    if config is None:
        return
    if not isinstance(config, dict):
        raise _invalid("output_config: Input should be a valid dictionary")
    for key in _set(config):
        if key not in ("effort", "format"):
            raise _invalid(f"output_config.{key}: Extra inputs are not permitted")
    if config.get("effort") is not None and config["effort"] not in EFFORTS:
        raise _invalid(
            "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
        )
    if config.get("format") is not None:
        _check_format_shape(config["format"], "output_config.format")


def _check_format_shape(given: object, where: str) -> None:
    if not isinstance(given, dict) or given.get("type") != "json_schema":
        raise _invalid(f"{where}.type: Input should be 'json_schema'")
    for key in given:
        if key not in ("type", "schema"):
            raise _invalid(f"{where}.{key}: Extra inputs are not permitted")
    if not isinstance(given.get("schema"), dict):
        raise _invalid(f"{where}.schema: Field required")


def _check_thinking(body: dict, family: str, betas: frozenset[str]) -> None:
    thinking = body.get("thinking")
    if thinking is None:
        return
    if not isinstance(thinking, dict):
        raise _invalid("thinking: Input should be a valid dictionary")
    kind = thinking.get("type")
    if kind not in ("adaptive", "enabled", "disabled", "between_tools"):
        raise _invalid(
            "thinking.type: Input should be 'adaptive', 'enabled', 'disabled' or 'between_tools'"
        )
    if kind != "adaptive" and not (family == HAIKU and kind == "disabled"):
        raise _invalid(THINKING_TYPE.format(kind))
    if kind == "disabled" and _effort(body) in ("xhigh", "max"):
        raise _invalid(
            f'"thinking.type.disabled" is not supported at effort "{_effort(body)}" for this '
            'model. Thinking can be turned off only at effort "low", "medium" or "high".'
        )
    _check_thinking_fields(thinking, betas)


def _check_thinking_fields(thinking: dict, betas: frozenset[str]) -> None:
    allowed = {"type", "display", "block_binding"} if thinking["type"] == "adaptive" else {"type"}
    for key in _set(thinking):
        if key not in allowed or (key == "block_binding" and BETA_BINDING not in betas):
            raise _invalid(f"thinking.{key}: Extra inputs are not permitted")
    display = thinking.get("display")
    updates = display == "updates" and BETA_DISPLAY_UPDATES in betas
    if display is not None and display not in DISPLAYS and not updates:
        raise _invalid("thinking.display: Input should be 'summarized' or 'omitted'")
    binding = thinking.get("block_binding")
    if binding is not None:
        behaviour = binding.get("prefix_mismatch_behavior") if isinstance(binding, dict) else None
        if behaviour not in ("error", "drop_block") or len(binding) != 1:
            raise _invalid(
                "thinking.block_binding.prefix_mismatch_behavior: Input should be 'error' or "
                "'drop_block'"
            )


def _check_tools(body: dict) -> set[str]:
    tools = body.get("tools")
    if tools is None:
        return set()
    if not isinstance(tools, list) or not all(isinstance(tool, dict) for tool in tools):
        raise _invalid("tools: Input should be a valid list of tools")
    names = set()
    for index, tool in enumerate(tools):
        if not _TOOL_NAME.match(str(tool.get("name", ""))):
            raise _invalid(f"tools.{index}.name: invalid name")
        if (tool.get("input_schema") or {}).get("type") != "object":
            raise _invalid(f"tools.{index}.input_schema.type: Input should be 'object'")
        names.add(tool["name"])
    return names


def _check_tool_choice(body: dict, family: str, names: set[str]) -> None:
    choice = body.get("tool_choice")
    if choice is None:
        return
    if not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none"):
        raise _invalid("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
    if choice["type"] in FORCED and family == OPUS:
        raise _invalid(FORCED_TOOL)
    if choice["type"] == "tool" and choice.get("name") not in names:
        raise _invalid(f"tool_choice: tool '{choice.get('name')}' not found in tools")


def _check_messages(body: dict) -> None:
    messages = body["messages"]
    if not messages or not isinstance(messages[0], dict) or messages[0].get("role") != "user":
        raise _invalid('messages: the first message must use the "user" role')
    for index, message in enumerate(messages):
        _check_message(message, index)
    uses_tools = any(
        _ids(message, kind, key)
        for message in messages
        for kind, key in (("tool_use", "id"), ("tool_result", "tool_use_id"))
    )
    if uses_tools and not body.get("tools"):
        raise _invalid(TOOLS_NEEDED)
    for index in range(len(messages)):
        _check_tool_pairs(messages, index)


def _check_message(message: object, index: int) -> None:
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        raise _invalid(f'messages.{index}.role: must be "user" or "assistant"')
    content = message.get("content")
    if not isinstance(content, str | list):
        raise _invalid(f"messages.{index}.content: Input should be a string or blocks")
    for number, block in enumerate(content if isinstance(content, list) else []):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise _invalid(f"messages.{index}.content.{number}.type: Field required")
    if content == []:
        raise _invalid(
            f"messages.{index}: all messages must have non-empty content except for the "
            "optional final assistant message"
        )
    _check_text(content, f"messages.{index}")


def _check_system(body: dict) -> None:
    system = body.get("system")
    if system is not None and not isinstance(system, str):
        blocks_ok = isinstance(system, list) and all(
            isinstance(b, dict) and b.get("type") == "text" for b in system
        )
        if not blocks_ok:
            raise _invalid("system: must be a string or text blocks")
        _check_text(system, "system")


def _check_tool_pairs(messages: list[dict], index: int) -> None:
    message = messages[index]
    if message["role"] == "assistant":
        following = messages[index + 1] if index + 1 < len(messages) else {}
        answered = _ids(following, "tool_result", "tool_use_id")
        missing = [i for i in _ids(message, "tool_use", "id") if i not in answered]
        if missing:
            raise _invalid(
                f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(map(str, missing))}. Each `tool_use` block "
                "must have a corresponding `tool_result` block in the next message."
            )
        return
    previous = messages[index - 1] if index > 0 else {}
    offered = _ids(previous, "tool_use", "id") if previous.get("role") == "assistant" else []
    stray = [i for i in _ids(message, "tool_result", "tool_use_id") if i not in offered]
    if stray:
        raise _invalid(
            f"messages.{index}.content: unexpected `tool_use_id` found in `tool_result` "
            f"blocks: {', '.join(map(str, stray))}. Each `tool_result` block must have a "
            "corresponding `tool_use` block in the previous message."
        )


def _ids(message: dict, block_type: str, key: str) -> list[str]:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return [b.get(key) for b in blocks if isinstance(b, dict) and b.get("type") == block_type]


def _empty_text(block: object) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and not str(block.get("text", "")).strip()
    )


def _check_text(content: object, where: str) -> None:
    """Refuses empty text blocks, also those inside tool results."""
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    for block in blocks:
        inner = block.get("content") if block.get("type") == "tool_result" else None
        if _empty_text(block) or (isinstance(inner, list) and any(map(_empty_text, inner))):
            raise _invalid(f"{where}: text content blocks must be non-empty")


def _check_breakpoints(body: dict) -> None:
    marks = [unit.get("cache_control") for unit in _units(body) if unit.get("cache_control")]
    if len(marks) > MAX_BREAKPOINTS:
        raise _invalid(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(marks)}."
        )
    lifetimes = []
    for mark in marks:
        if mark.get("type") != "ephemeral" or mark.get("ttl", "5m") not in TTL_S:
            raise _invalid(f"cache_control: invalid value {mark}")
        lifetimes.append(TTL_S[mark.get("ttl", "5m")])
    if lifetimes != sorted(lifetimes, reverse=True):
        raise _invalid(
            "a cache_control entry with a longer ttl must come before any with a shorter one"
        )


# --- structured outputs and strict tools -----------------------------------------------------


def output_format(body: dict) -> dict | None:
    """The structured output format a request asks for, if any (`output_format` is the
    deprecated spelling, accepted with its beta)."""
    config = body.get("output_config") or {}
    return config.get("format") or body.get("output_format")


def structured_name(body: dict) -> str | None:
    """Which of the offline model's structured calls a request's output format is, if any."""
    schema = (output_format(body) or {}).get("schema") or {}
    return STRUCTURED_CALLS.get(frozenset(schema.get("properties") or {}))


@dataclass
class _SchemaCount:
    optional: int = 0
    unions: int = 0


def _check_structured(body: dict) -> None:
    """Structured outputs and strict tools take a subset of JSON Schema, within limits counted
    over all their schemas together."""
    given = body.get("output_format")
    if given is not None:
        if (body.get("output_config") or {}).get("format") is not None:
            raise _invalid("output_format: give either output_format or output_config.format")
        _check_format_shape(given, "output_format")
    counts = _SchemaCount()
    config_format = (body.get("output_config") or {}).get("format")
    if config_format is not None:
        _check_schema(config_format["schema"], "output_config.format.schema", counts)
    elif given is not None:
        _check_schema(given["schema"], "output_format.schema", counts)
    strict = [(i, t) for i, t in enumerate(body.get("tools") or []) if t.get("strict") is True]
    if len(strict) > MAX_STRICT_TOOLS:
        raise _invalid(
            f"tools: at most {MAX_STRICT_TOOLS} tools may be strict in one request; "
            f"found {len(strict)}"
        )
    for index, tool in strict:
        _check_schema(tool["input_schema"], f"tools.{index}.input_schema", counts)
    _check_counts(counts)


def _check_counts(counts: _SchemaCount) -> None:
    if counts.optional > MAX_OPTIONAL_PROPERTIES:
        raise _invalid(
            f"The strict schemas hold {counts.optional} optional properties; at most "
            f"{MAX_OPTIONAL_PROPERTIES} are allowed across all strict tools and the output format."
        )
    if counts.unions > MAX_UNION_PROPERTIES:
        raise _invalid(
            f"The strict schemas hold {counts.unions} properties with union types; at most "
            f"{MAX_UNION_PROPERTIES} are allowed across all strict tools and the output format."
        )


def _check_schema(node: object, where: str, counts: _SchemaCount) -> None:
    if not isinstance(node, dict):
        return
    for keyword in UNSUPPORTED_KEYWORDS:
        if keyword in node:
            raise _invalid(f"{where}: the '{keyword}' keyword is not supported")
    if node.get("minItems", 0) not in (0, 1):
        raise _invalid(f"{where}: 'minItems' values other than 0 or 1 are not supported")
    kind = node.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in node:
        if node.get("additionalProperties") is not False:
            raise _invalid(
                f"{where}: For 'object' type, 'additionalProperties' must be explicitly set "
                "to false"
            )
        required = set(node.get("required") or [])
        optional = [name for name in node.get("properties") or {} if name not in required]
        counts.optional += len(optional)
    if "anyOf" in node or isinstance(kind, list):
        counts.unions += 1
    for path, child in _schema_children(node):
        _check_schema(child, f"{where}.{path}", counts)


def _schema_children(node: dict) -> Iterator[tuple[str, object]]:
    for key in ("properties", "$defs", "definitions"):
        for name, child in (node.get(key) or {}).items():
            yield f"{key}.{name}", child
    for key in ("anyOf", "allOf", "oneOf", "prefixItems"):
        for number, child in enumerate(node.get(key) or []):
            yield f"{key}.{number}", child
    for key in ("items", "not", "additionalProperties"):
        if isinstance(node.get(key), dict):
            yield key, node[key]


# --- thinking blocks sent back: signatures bound to their prefix -------------------------------


def _content_blocks(message: dict) -> list[dict]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _entries(messages: list[dict], first: int = 0) -> Iterator[tuple[str, dict, tuple[int, int]]]:
    """Every block of `messages[first:]` as (role, block, where), empty text blocks left out:
    splitting or merging messages of one role changes nothing here."""
    for i in range(first, len(messages)):
        for j, block in enumerate(_content_blocks(messages[i])):
            if not _empty_text(block):
                yield messages[i]["role"], block, (i, j)


def _latest_assistant_turn(messages: list[dict]) -> list[tuple[dict, tuple[int, int]]]:
    """The blocks of the latest assistant message, with the assistant messages right before it
    (the same turn, split)."""
    ends = [i for i, message in enumerate(messages) if message.get("role") == "assistant"]
    if not ends:
        return []
    start = ends[-1]
    while start > 0 and messages[start - 1].get("role") == "assistant":
        start -= 1
    return [(block, where) for _, block, where in _entries(messages[: ends[-1] + 1], start)]


def _canonical(block: dict) -> dict:
    """A block as the binding reads it: no `cache_control`, no null fields; a thinking block is
    its signature (what is written into an omitted block's text is ignored)."""
    if block.get("type") == "thinking":
        return {"type": "thinking", "signature": block.get("signature")}
    shaped = {k: v for k, v in block.items() if k != "cache_control" and v is not None}
    if not shaped.get("citations", True):
        shaped.pop("citations")
    if shaped.get("type") == "tool_result":
        inner = shaped.get("content", [])
        inner = [{"type": "text", "text": inner}] if isinstance(inner, str) else inner
        shaped["content"] = [_canonical(b) for b in inner if not _empty_text(b)]
    return shaped


def _dumps(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _form(block: dict) -> str:
    """A short fingerprint of a block as the binding reads it."""
    return hashlib.sha256(_dumps(_canonical(block)).encode()).hexdigest()


def _head(body: dict) -> dict:
    """What comes before every message: the rule family, the tools and the system prompt."""
    system = body.get("system") or []
    system = [{"type": "text", "text": system}] if isinstance(system, str) else system
    return {
        "rules": rules_for(body["model"]),
        "tools": [_canonical(tool) for tool in body.get("tools") or []],
        "system": [_canonical(b) for b in system if not _empty_text(b)],
    }


class _Prefix:
    """A conversation read block by block as a thinking block's binding sees what came before
    it: a digest of every block that is not thinking, and the thinking blocks with where each
    stood among those."""

    def __init__(self, head: dict) -> None:
        self._hash = hashlib.sha256(_dumps(head).encode())
        self._plain_blocks = 0
        self.earlier: list[tuple[str, int]] = []

    @property
    def plain(self) -> str:
        return self._hash.hexdigest()

    def add(self, role: str, block: dict) -> None:
        if block.get("type") in THINKING_TYPES:
            key = block.get("signature") if block["type"] == "thinking" else block.get("data")
            self.earlier.append((str(key), self._plain_blocks))
            return
        self._hash.update((_dumps([role, _canonical(block)]) + "\n").encode())
        self._plain_blocks += 1


@dataclass(frozen=True)
class Thought:
    """What a thinking block's signature was made after (under which model's rules), and the
    text it was issued with."""

    rules: str
    plain: str
    earlier: tuple[tuple[str, int], ...]
    text: str


def _where(position: tuple[int, int]) -> str:
    return f"messages.{position[0]}.content.{position[1]}"


class ThinkingLedger:
    """What the server answered that a later request may send back: each thinking block's
    signature with its prefix, each tool-use turn that held thinking, each paused turn. Callers
    hold the server's lock."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)
        self._thoughts: dict[str, Thought] = {}
        self._tool_turns: dict[str, tuple[str, ...]] = {}  # tool_use id: the turn's blocks
        self._paused: set[tuple[str, ...]] = set()

    def check(self, body: dict, betas: frozenset[str]) -> dict[tuple[int, int], str]:
        """Refuses a prefill, a tool loop whose turn was modified, and thinking blocks whose
        signature is not ours or was made after another prefix. Returns the blocks to drop,
        with why: those made under the other model's rules (which it cannot read), and those
        made after another prefix when the request asks for dropping them."""
        messages = body["messages"]
        if messages[-1]["role"] == "assistant":
            turn = tuple(_form(block) for block, _ in _latest_assistant_turn(messages))
            if turn not in self._paused:
                raise _invalid(PREFILL)
        self._check_tool_turn(messages)
        return self._check_signatures(body, betas)

    def sign(self, body: dict, content: list[dict]) -> None:
        """Signs the thinking blocks of an answer to `body`, each over what comes before it."""
        prefix = _Prefix(_head(body))
        for role, block, _ in _entries(body["messages"]):
            prefix.add(role, block)
        for block in content:
            if block["type"] == "thinking":
                rules = rules_for(body["model"])
                thought = Thought(rules, prefix.plain, tuple(prefix.earlier), block["thinking"])
                block["signature"] = self._mac(thought, thought.text)
                self._thoughts[block["signature"]] = thought
            prefix.add("assistant", block)

    def record(self, body: dict, content: list[dict], stop_reason: str) -> None:
        """Remembers the turn an answer ends (with the assistant blocks it continues)."""
        messages = body["messages"]
        earlier = [b for b, _ in _latest_assistant_turn(messages)]
        turn = [*(earlier if messages[-1]["role"] == "assistant" else []), *content]
        forms = tuple(_form(block) for block in turn)
        if stop_reason == "pause_turn":
            self._paused.add(forms)
        if any(block.get("type") == "thinking" for block in turn):
            for block in turn:
                if block.get("type") == "tool_use":
                    self._tool_turns[str(block.get("id"))] = forms

    def _mac(self, thought: Thought, shown: str) -> str:
        signed = _dumps([thought.plain, thought.earlier, shown]).encode()
        return base64.b64encode(hmac.new(self._key, signed, hashlib.sha256).digest()).decode()

    def _check_tool_turn(self, messages: list[dict]) -> None:
        turn = _latest_assistant_turn(messages)
        issued = next(
            (
                self._tool_turns[block["id"]]
                for block, _ in turn
                if block.get("type") == "tool_use" and block.get("id") in self._tool_turns
            ),
            None,
        )
        sent = tuple(_form(block) for block, _ in turn)
        if issued is None or sent == issued:
            return
        pairs = zip(sent, issued, strict=False)
        first = next((n for n, (a, b) in enumerate(pairs) if a != b), min(len(sent), len(issued)))
        last_i, last_j = turn[-1][1]
        where = turn[first][1] if first < len(turn) else (last_i, last_j + 1)
        raise _invalid(f"{_where(where)}: {MODIFIED}")

    def _check_signatures(self, body: dict, betas: frozenset[str]) -> dict[tuple[int, int], str]:
        binding = _set(body.get("thinking") or {}).get("block_binding") or {}
        drops = binding.get("prefix_mismatch_behavior") == "drop_block"
        rules = rules_for(body["model"])
        prefix = _Prefix(_head(body))
        dropped: dict[tuple[int, int], str] = {}
        mismatched = False
        for role, block, where in _entries(body["messages"]):
            kind = block.get("type")
            if kind in THINKING_TYPES and mismatched:  # every later thinking block goes too
                dropped[where] = "prefix_binding_mismatch"
                continue
            if kind == "redacted_thinking" and not isinstance(block.get("data"), str):
                raise _invalid(f"{_where(where)}.data: Field required")
            if kind == "thinking":
                thought = self._verified(block, where)
                if thought.rules != rules:
                    dropped[where] = "model_binding_mismatch"
                    continue
                if not _bound_after(thought, prefix):
                    if not drops:
                        tail = "" if BETA_BINDING in betas else BINDING_NEEDS_BETA
                        raise _invalid(f"{_where(where)}: {BOUND_ELSEWHERE}{tail}")
                    dropped[where], mismatched = "prefix_binding_mismatch", True
                    continue
            prefix.add(role, block)
        return dropped

    def _verified(self, block: dict, where: tuple[int, int]) -> Thought:
        """What a thinking block was made after; raises on a signature not made here or on
        summarized text that was changed."""
        if not isinstance(block.get("thinking"), str):
            raise _invalid(f"{_where(where)}.thinking: Field required")
        signature = block.get("signature")
        thought = self._thoughts.get(signature) if isinstance(signature, str) else None
        shown = block["thinking"] if thought and thought.text else ""
        if thought is None or not hmac.compare_digest(signature, self._mac(thought, shown)):
            raise _invalid(f"{_where(where)}: {INVALID_SIGNATURE}")
        return thought


def _bound_after(thought: Thought, prefix: _Prefix) -> bool:
    """Whether a thinking block belongs after `prefix`: the same blocks before it, with at most
    the oldest earlier thinking blocks left out."""
    kept = len(prefix.earlier)
    oldest_left_out = kept <= len(thought.earlier) and (
        tuple(prefix.earlier) == thought.earlier[len(thought.earlier) - kept :]
    )
    return thought.plain == prefix.plain and oldest_left_out


def without_blocks(body: dict, dropped: Collection[tuple[int, int]]) -> dict:
    """The request with the blocks at `dropped` taken out."""
    if not dropped:
        return body
    gone = set(dropped)
    messages = [
        {**m, "content": [b for j, b in enumerate(_content_blocks(m)) if (i, j) not in gone]}
        for i, m in enumerate(body["messages"])
    ]
    return {**body, "messages": messages}


# --- answers -----------------------------------------------------------------------------------


def thinking_display(body: dict) -> str | None:
    """How an answer shows its thinking, or None when it has no thinking block: on Haiku rules
    a forced tool or thinking turned off leaves it out."""
    thinking = _set(body.get("thinking") or {})
    forced = (body.get("tool_choice") or {}).get("type") in FORCED
    if rules_for(body["model"]) == HAIKU and (forced or thinking.get("type") == "disabled"):
        return None
    return thinking.get("display", "omitted")


def _without_thinking(messages: list[dict]) -> list[dict]:
    return [
        {**m, "content": [b for b in m["content"] if b.get("type") not in THINKING_TYPES]}
        if isinstance(m.get("content"), list)
        else m
        for m in messages
    ]


def rules_answer(body: dict) -> list[dict]:
    """What the offline model would answer to this request."""
    choice = body.get("tool_choice") or {}
    prompt = block_text(body["messages"][-1].get("content"))
    if choice.get("type") == "tool":
        answer = _structured(choice["name"], f"tool {choice['name']!r}", prompt)
        return [_tool_block(choice["name"], answer)]
    wanted = output_format(body)
    if wanted is not None:
        name = structured_name(body)
        properties = sorted((wanted.get("schema") or {}).get("properties") or {})
        answer = _structured(name or "", f"an output format with properties {properties}", prompt)
        return [{"type": "text", "text": json.dumps(answer, ensure_ascii=False)}]
    system = body.get("system") or ""
    system = system if isinstance(system, str) else block_text(system)
    offered = {tool["name"] for tool in body.get("tools") or []}
    if choice.get("type") == "none":
        offered = set()
    tier = "work" if offered & _WORK_TOOLS else "main"
    messages = _without_thinking(body["messages"])
    answer = respond(tier=tier, system=system, messages=messages, offered=offered)
    # The offline rules name a call by its content; the API gives every call an id of its own.
    return [
        {**block, "id": f"toolu_{uuid.uuid4().hex[:24]}"} if block["type"] == "tool_use" else block
        for block in answer
    ]


def _structured(name: str, what: str, prompt: str) -> dict:
    try:
        return structured_answer(name, prompt)
    except KeyError as failure:
        raise _invalid(f"the local server has no answer for {what}") from failure
    except ValueError as failure:
        unread = f"the local server has no answer for {what}: its rules cannot read the prompt"
        raise _invalid(unread) from failure


def message_json(
    body: dict,
    content: list[dict],
    stop_reason: str | None,
    prompt: dict,
    stop_details: dict | None = None,
) -> dict:
    """The answer message; `prompt` is the input side of its usage (`PromptCache.use`)."""
    visible = "".join(
        b.get("text", "") if b["type"] == "text" else json.dumps(b.get("input", ""))
        for b in content
        if b["type"] in ("text", "tool_use")
    )
    thinking = THINKING_TOKENS * sum(b["type"] == "thinking" for b in content)
    uses_tools = any(b["type"] == "tool_use" for b in content)
    reason = stop_reason or ("tool_use" if uses_tools else "end_turn")
    output = count_tokens(visible) + thinking
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": content,
        "stop_reason": reason,
        "stop_sequence": None,
        "stop_details": stop_details if reason == "refusal" else None,
        "usage": {
            **prompt,
            "output_tokens": output if reason == "refusal" or prewarms(body) else max(1, output),
            "output_tokens_details": {"thinking_tokens": thinking},
        },
    }


# --- the prompt cache --------------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    """One unit of a request as the cache sees it: `key` names the whole prefix up to and
    including it; `ttl_s` is set when it carries a breakpoint."""

    key: str
    tokens: int
    ttl_s: float | None


def _units(body: dict) -> list[dict]:
    """The request as the cache reads it, in order: each tool, each system block, each block
    of each message (a message's first block marked as the start of a turn)."""
    units: list[dict] = [dict(tool) for tool in body.get("tools") or []]
    system = body.get("system")
    if isinstance(system, str) and system:
        units.append({"type": "text", "text": system})
    elif isinstance(system, list):
        units.extend(dict(block) for block in system)
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for number, block in enumerate(blocks):
            units.append({**block, "role": message.get("role"), "opens_turn": number == 0})
    return units


def segments(body: dict) -> list[Segment]:
    """The request's cache units. The output format is rendered before everything, and the
    thinking setup, effort and `tool_choice` before the messages, so changing them misses from
    there on (a new `tool_choice` keeps the tools and system cached, not the messages)."""
    chain = hashlib.sha256(_dumps([body.get("model"), output_format(body)]).encode())
    thinking = _set(body.get("thinking") or {}).get("type", "adaptive")
    choice = body.get("tool_choice") or {"type": "auto"}
    setup_added = False
    found = []
    for unit in _units(body):
        if "role" in unit and not setup_added:
            chain.update(_dumps([thinking, _effort(body), choice]).encode())
            setup_added = True
        mark = unit.pop("cache_control", None)
        chain.update(json.dumps(unit, sort_keys=True).encode())
        ttl_s = TTL_S[mark.get("ttl", "5m")] if mark else None
        found.append(Segment(chain.hexdigest(), count_tokens(json.dumps(unit)), ttl_s))
    return found


class PromptCache:
    """The API's prompt cache: prefixes written at breakpoints, each alive for its lifetime
    after its last use."""

    def __init__(self, min_tokens: int, clock: Callable[[], float]) -> None:
        self.min_tokens = min_tokens
        self._clock = clock
        self._alive: dict[str, tuple[float, float]] = {}  # key: (expires at, lifetime)

    def clear(self) -> None:
        self._alive.clear()

    def use(self, found: list[Segment]) -> dict:
        """Reads the longest cached prefix, writes the breakpoints past it; the input usage."""
        now = self._clock()
        self._alive = {k: v for k, v in self._alive.items() if v[0] > now}
        ends = list(accumulate(segment.tokens for segment in found))
        marks = [i for i, s in enumerate(found) if s.ttl_s is not None]
        hit = max((self._hit(found, mark) for mark in marks), default=-1)
        if hit >= 0:
            _, lifetime = self._alive[found[hit].key]
            self._alive[found[hit].key] = (now + lifetime, lifetime)
        read = ends[hit] if hit >= 0 else 0
        written = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
        upto = read
        for mark in marks:
            ttl_s = found[mark].ttl_s
            if ttl_s is None or mark <= hit or ends[mark] < self.min_tokens:
                continue
            self._alive[found[mark].key] = (now + ttl_s, ttl_s)
            lifetime = "1h" if ttl_s == TTL_S["1h"] else "5m"
            written[f"ephemeral_{lifetime}_input_tokens"] += ends[mark] - upto
            upto = ends[mark]
        total = ends[-1] if ends else 0
        return {
            "input_tokens": max(1, total - upto),
            "cache_creation_input_tokens": upto - read,
            "cache_read_input_tokens": read,
            "cache_creation": written,
        }

    def _hit(self, found: list[Segment], mark: int) -> int:
        """The end of the cached prefix found from breakpoint `mark`, looking back over
        `LOOKBACK_BLOCKS` blocks, the breakpoint's own among them; -1: none."""
        for index in range(mark, max(-1, mark - LOOKBACK_BLOCKS), -1):
            if found[index].key in self._alive:
                return index
        return -1


@dataclass
class PromiseScript:
    """A main model that records a promise on every `every`-th of the person's turns and, when
    it `keeps` them, keeps the oldest promise of Open items on the turn before each new one.
    Updates it is given to tell, it tells."""

    every: int
    keeps: bool = False
    turns: int = 0

    def answer(self, body: dict) -> list[dict] | None:
        offered = {tool["name"] for tool in body.get("tools") or []}
        if violet_tools.RECORD_PROMISE not in offered or not answers_person(body):
            return None
        self.turns += 1
        if self.turns % self.every == 0:
            promise = f"send the notes from our talk, part {self.turns // self.every}"
            return [_tool_block(violet_tools.RECORD_PROMISE, {"text": promise})]
        system = body.get("system") or ""
        system = system if isinstance(system, str) else block_text(system)
        promises = [key for kind, key, _ in open_items(system) if kind == "promise"]
        if self.keeps and promises and (self.turns + 1) % self.every == 0:
            return [_tool_block(violet_tools.KEEP_PROMISE, {"promise_id": promises[0]})]
        return None


def opens_turn(body: dict) -> bool:
    """Whether a request's newest user turn holds words rather than only tool results."""
    messages = body.get("messages") or []
    if not messages or messages[-1].get("role") != "user":
        return False
    content = messages[-1].get("content")
    blocks = content if isinstance(content, list) else [{"type": "text"}]
    return any(b.get("type") != "tool_result" for b in blocks)


def answers_person(body: dict) -> bool:
    """Whether a request opens a turn that answers the person, not one telling an update."""
    if not opens_turn(body):
        return False
    content = body["messages"][-1]["content"]
    if not isinstance(content, str):  # the notes after the person's words are not theirs
        content = [b for b in content if not violet_tools.is_memory_note(b)]
    first = content if isinstance(content, str) else block_text(content[:1])
    return not first.startswith(violet_tools.UPDATE_PREFIX)


# --- the stream --------------------------------------------------------------------------------


def _sse(event: str, data: dict) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def _chunks(text: str, size: int = 16) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


@dataclass(frozen=True)
class Thinking:
    """How long a stream's thinking takes, and how often its summary shows a piece of itself."""

    seconds: float = 0.0
    summary_every_s: float = SUMMARY_EVERY_S

    def deltas(self, block: dict) -> list[dict | float]:
        """A thinking block's deltas, with the pauses (seconds) between them: a summary
        streams in pieces as the thinking goes; an omitted one is silent until its signature."""
        shown = block["thinking"]
        signature = {"type": "signature_delta", "signature": block["signature"]}
        if not self.seconds:
            return [{"type": "thinking_delta", "thinking": shown}, signature]
        if not shown:
            return [{"type": "thinking_delta", "thinking": ""}, self.seconds, signature]
        count = max(1, math.ceil(self.seconds / self.summary_every_s))
        size = max(1, math.ceil(len(shown) / count))
        pieces = [shown[i : i + size] for i in range(0, len(shown), size)]
        paced: list[dict | float] = []
        for piece in pieces:
            paced += [self.seconds / len(pieces), {"type": "thinking_delta", "thinking": piece}]
        return [*paced, signature]


def _opening_and_deltas(
    block: dict, cut_json: str | None = None, thinking: Thinking = Thinking()
) -> tuple[dict, list[dict | float]]:
    kind = block["type"]
    if kind == "text":
        parts = _chunks(block["text"])
        return {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in parts]
    if kind == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}, thinking.deltas(block)
    if kind == "tool_use":
        sent = json.dumps(block["input"]) if cut_json is None else cut_json
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in ["", *_chunks(sent)]]
        return {**block, "input": {}}, deltas
    return block, []


def sse_events(
    message: dict,
    failure: tuple[int, str, str] | None = None,
    cut_json: str | None = None,
    thinking: Thinking = Thinking(),
) -> Iterator[str | float]:
    """The stream of a message, event by event, as the API sends it, with the pauses (seconds)
    its thinking takes. `cut_json` is what is sent of the last block's input when it was cut."""
    usage = message["usage"]
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_details": None,
        "usage": {
            **usage,
            "output_tokens": min(1, usage["output_tokens"]),
            "output_tokens_details": {"thinking_tokens": 0},
        },
    }
    yield _sse("message_start", {"type": "message_start", "message": start})
    if failure is not None:
        _status, kind, words = failure
        yield _sse("ping", {"type": "ping"})
        yield _sse("error", {"type": "error", "error": {"type": kind, "message": words}})
        return
    if message["content"]:
        yield _sse("ping", {"type": "ping"})
    last = len(message["content"]) - 1
    for index, block in enumerate(message["content"]):
        opening, deltas = _opening_and_deltas(block, cut_json if index == last else None, thinking)
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": opening},
        )
        for delta in deltas:
            if isinstance(delta, int | float):
                yield float(delta)
                continue
            yield _sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {
                "stop_reason": message["stop_reason"],
                "stop_sequence": None,
                "stop_details": message["stop_details"],
            },
            "usage": {
                "output_tokens": usage["output_tokens"],
                "output_tokens_details": usage["output_tokens_details"],
            },
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


# --- the server --------------------------------------------------------------------------------


class MessagesAPI:
    """The server, its queue of canned answers and its record of requests."""

    def __init__(
        self, *, api_key: str | None = None, min_cacheable_tokens: int = MIN_CACHEABLE_TOKENS
    ) -> None:
        self.api_key = api_key
        self.min_cacheable_tokens = min_cacheable_tokens
        self._lock = threading.Lock()
        self._queue: deque[Canned] = deque()
        self._requests: list[RecordedRequest] = []
        # Every request a rule refused since the server started: `reset` keeps them, so the
        # suite can tell which test made one.
        self._rejections: list[RecordedRequest] = []
        self._skew_s = 0.0
        self.cache = PromptCache(min_cacheable_tokens, lambda: time.monotonic() + self._skew_s)
        # Signatures stay valid across `reset()`, as the API's do across conversations.
        self._ledger = ThinkingLedger()
        self._promises: PromiseScript | None = None
        self._every: tuple[int, Canned] | None = None
        self._pace_s = 0.0
        self._thinks = True
        self._counted = 0
        self._failed_by_count: set[str] = set()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""
        self.app = Starlette(
            routes=[
                Route("/v1/messages", self._messages, methods=["POST"]),
                Route("/_control/queue", self._control_queue, methods=["POST"]),
                Route("/_control/requests", self._control_requests, methods=["GET"]),
                Route("/_control/rejections", self._control_rejections, methods=["GET"]),
                Route("/_control/reset", self._control_reset, methods=["POST"]),
                Route("/_control/failing", self._control_failing, methods=["POST"]),
                Route("/_control/every", self._control_every, methods=["POST"]),
                Route("/_control/clock", self._control_clock, methods=["POST"]),
                Route("/_control/promises", self._control_promises, methods=["POST"]),
                Route("/_control/keys", self._control_keys, methods=["POST"]),
                Route("/_control/pace", self._control_pace, methods=["POST"]),
                Route("/_control/thinking", self._control_thinking, methods=["POST"]),
            ]
        )
        # Structured calls (by name) answered with an error until healed.
        self._failing: dict[str, tuple[int, str, str]] = {}
        # Keys refused (by the status of the refusal) until accepted again.
        self._refused_keys: dict[str, int] = {}

    # --- scripting -----------------------------------------------------------------------

    def push(self, *answers: Canned) -> None:
        with self._lock:
            self._queue.extend(answers)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def bodies(self) -> list[dict]:
        return [r.body for r in self.requests]

    def rejections(self) -> list[RecordedRequest]:
        """Every request a rule of the API refused since the server started, oldest first
        (scripted errors are not; `reset` keeps these)."""
        with self._lock:
            return list(self._rejections)

    def reset(self, *, keep_record: bool = False) -> None:
        """Empties the queue and the scripts and forgets the cache; the record of requests too,
        unless `keep_record`."""
        with self._lock:
            self._queue.clear()
            if not keep_record:
                self._requests.clear()
            self.cache.clear()
            self.cache.min_tokens = self.min_cacheable_tokens
            self._promises = None
            self._every = None
            self._pace_s = 0.0
            self._thinks = True

    def pace(self, stall_s: float) -> None:
        """Every answer from now waits `stall_s` seconds before it is made; 0 stops it."""
        with self._lock:
            self._pace_s = max(0.0, stall_s)

    def skip_thinking(self, skipped: bool = True) -> None:
        """From now every answer comes without a thinking block, as adaptive thinking may
        answer a simple request (queued answers too); False thinks again."""
        with self._lock:
            self._thinks = not skipped

    def advance_clock(self, seconds: float) -> None:
        """Moves the prompt cache's time on, so entries can outlive their lifetime in a test."""
        with self._lock:
            self._skew_s += seconds

    def promise_script(self, every: int, keeps: bool = False) -> None:
        """Main calls record (and keep) promises as `PromiseScript` says; `every` 0 stops it."""
        with self._lock:
            self._promises = PromiseScript(every, keeps) if every > 0 else None

    def fail_every(self, n: int, canned: Canned | None = None) -> None:
        """Every `n`-th valid request from now is answered with `canned` (ahead of the queue
        and the rules); `n` 0 stops it. Requests a rule refused are not counted."""
        with self._lock:
            self._every = (n, canned) if n > 0 and canned is not None else None
            self._counted = 0
            self._failed_by_count.clear()

    def fail_tool(self, name: str, status: int = 400) -> None:
        """Every structured call `name` fails with `status` until `heal_tool(name)`: a forced
        call of tool `name`, or an output format the offline rules know as `name`."""
        kind = "overloaded_error" if status == 529 else "invalid_request_error"
        with self._lock:
            self._failing[name] = (status, kind, f"{name} is failing on purpose")

    def heal_tool(self, name: str) -> None:
        with self._lock:
            self._failing.pop(name, None)

    def refuse_key(self, key: str, status: int = 401) -> None:
        """Every request made with `key` is refused as the API refuses a key: 401 (wrong or
        revoked), 402 (the account cannot pay) or 403 (no permission); 0 accepts it again."""
        with self._lock:
            if status and status not in KEY_REFUSALS:
                raise ValueError(f"the API refuses a key with {sorted(KEY_REFUSALS)}, not {status}")
            if status:
                self._refused_keys[key] = status
            else:
                self._refused_keys.pop(key, None)

    def _scripted(self, body: dict) -> list[dict] | None:
        with self._lock:
            return self._promises.answer(body) if self._promises else None

    def _every_nth(self, body: dict) -> Canned | None:
        """The n-th valid request's failure. A request sent again after failing this way is
        let through and the next one fails in its place: a busy service's failures do not
        follow one request, and a bare count can lock onto a client whose retries come in
        step with other clients' requests, failing it until its retry budget is spent."""
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        with self._lock:
            if self._every is None:
                return None
            self._counted += 1
            n, canned = self._every
            if self._counted % n:
                return None
            if digest in self._failed_by_count:
                self._counted -= 1
                return None
            self._failed_by_count.add(digest)
            return copy.deepcopy(canned)

    def _failure_for(self, body: dict) -> Canned | None:
        choice = body.get("tool_choice") or {}
        name = choice.get("name") if choice.get("type") == "tool" else structured_name(body)
        with self._lock:
            failing = self._failing.get(name or "")
        return error(*failing) if failing else None

    def _next(self) -> Canned | None:
        with self._lock:
            return self._queue.popleft() if self._queue else None

    # --- running -------------------------------------------------------------------------

    def start(self, host: str = "127.0.0.1", port: int = 0) -> MessagesAPI:
        sock = _listening_socket(host, port)
        self.url = f"http://{host}:{sock.getsockname()[1]}"
        self._server = _uvicorn(self.app)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="messages-api", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the local Messages API server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> MessagesAPI:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    # --- HTTP ----------------------------------------------------------------------------

    async def _messages(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"unparsed": raw.decode(errors="replace")}
        record = RecordedRequest(request.url.path, dict(request.headers), body)
        with self._lock:
            self._requests.append(record)
        try:
            return await self._answer(request, body, record)
        except ApiError as failure:
            record.status = failure.status
            if failure.rule:
                self._rejected(record, failure.message)
            return error_response(failure.status, failure.kind, failure.message)
        except Exception as failure:  # a fault of this server must fail the test, not hide
            record.status = 500
            self._rejected(record, f"the local Messages API server failed: {failure!r}")
            return error_response(500, "api_error", str(record.rejected))

    def _rejected(self, record: RecordedRequest, why: str) -> None:
        record.rejected = why
        with self._lock:
            self._rejections.append(record)

    async def _answer(self, request: Request, body: dict, record: RecordedRequest) -> Response:
        with self._lock:
            refused = dict(self._refused_keys)
        _authenticate(request, self.api_key, refused)
        betas = betas_of(request)
        validate(body, betas)
        check_model_exists(body)
        with self._lock:
            dropped = self._ledger.check(body, betas)
        seen = without_blocks(body, dropped)
        with self._lock:
            pace_s = self._pace_s
        if pace_s:
            await _stall(request, pace_s)
        if prewarms(seen):
            return self._prewarmed(seen, record)
        canned = self._every_nth(body) or self._failure_for(body) or self._next()
        streamed = bool(body.get("stream"))
        if canned is not None and canned.stall_s:
            await _stall(request, canned.stall_s)
        if canned is not None and canned.think_s and not streamed:
            await _stall(request, canned.think_s)  # an answer not streamed comes whole, later
        if canned is not None and canned.error and not (canned.mid_stream and streamed):
            record.status = canned.error[0]
            return error_response(
                *canned.error,
                retry_after_s=canned.retry_after_s,
                retry_after_ms=canned.retry_after_ms,
                should_retry=canned.should_retry,
                error_code=canned.error_code,
            )
        if canned is not None:
            content, stop_reason = canned.content, canned.stop_reason
        else:
            content, stop_reason = self._scripted(seen) or rules_answer(seen), None
        thinks = canned.thinks if canned is not None else True
        blocks = self._with_thinking(seen, content, stop_reason, thinks and self._thinks)
        with self._lock:
            prompt = self.cache.use(segments(seen))
        details = canned.stop_details if canned is not None else None
        message = message_json(seen, blocks, stop_reason, prompt, details)
        if dropped and BETA_BINDING in betas:
            message["input_transformations"] = [
                {"type": "thinking_dropped", "reason": reason} for reason in dropped.values()
            ]
        failure = canned.error if canned is not None else None
        if failure is None:
            with self._lock:
                self._ledger.record(seen, blocks, message["stop_reason"])
        record.usage, record.status = message["usage"], 200
        request_id = {"request-id": f"req_{uuid.uuid4().hex[:24]}"}
        if not streamed:
            return JSONResponse(message, headers=request_id)
        pause_s = canned.stream_pause_s if canned is not None else 0.0
        cut_json = canned.cut_json if canned is not None else None
        thinking = Thinking(canned.think_s, canned.summary_every_s) if canned else Thinking()
        return StreamingResponse(
            _stream(sse_events(message, failure, cut_json, thinking), pause_s),
            media_type="text/event-stream",
            headers=request_id,
        )

    def _prewarmed(self, body: dict, record: RecordedRequest) -> Response:
        """A pre-warming request's answer: its prompt cached, no content, no queued answer
        spent on it."""
        with self._lock:
            prompt = self.cache.use(segments(body))
        message = message_json(body, [], "max_tokens", prompt)
        record.usage, record.status = message["usage"], 200
        return JSONResponse(message, headers={"request-id": f"req_{uuid.uuid4().hex[:24]}"})

    def _with_thinking(
        self, body: dict, content: list[dict], stop_reason: str | None, thinks: bool
    ) -> list[dict]:
        """The answer's blocks: no empty text, a thinking block first unless the request turns
        it off, the model chose not to think (`thinks` False) or the answer already holds one;
        every thinking block signed."""
        blocks = [copy.deepcopy(b) for b in content if not _empty_text(b)]
        display = thinking_display(body)
        holds = any(b["type"] == "thinking" for b in blocks)
        if display is not None and stop_reason != "refusal" and thinks and not holds:
            shown = THINKING_SUMMARY if display == "summarized" else ""
            blocks.insert(0, {"type": "thinking", "thinking": shown, "signature": ""})
        with self._lock:
            self._ledger.sign(body, blocks)
        return blocks

    async def _control_queue(self, request: Request) -> Response:
        specs = await request.json()
        self.push(*(canned_from_spec(spec) for spec in specs))
        return JSONResponse({"queued": len(specs)})

    async def _control_requests(self, request: Request) -> Response:
        return JSONResponse([vars(r) for r in self.requests])

    async def _control_rejections(self, request: Request) -> Response:
        return JSONResponse([vars(r) for r in self.rejections()])

    async def _control_failing(self, request: Request) -> Response:
        spec = await request.json()
        if spec.get("status"):
            self.fail_tool(spec["tool"], int(spec["status"]))
        else:
            self.heal_tool(spec["tool"])
        return JSONResponse({"failing": spec})

    async def _control_every(self, request: Request) -> Response:
        spec = await request.json()
        every = int(spec.get("every", 0))
        self.fail_every(every, canned_from_spec(spec["spec"]) if every > 0 else None)
        return JSONResponse({"every": every})

    async def _control_pace(self, request: Request) -> Response:
        spec = await request.json()
        self.pace(float(spec.get("stall_s", 0.0)))
        return JSONResponse({"stall_s": spec.get("stall_s", 0.0)})

    async def _control_thinking(self, request: Request) -> Response:
        spec = await request.json()
        self.skip_thinking(bool(spec.get("skipped", True)))
        return JSONResponse({"skipped": spec.get("skipped", True)})

    async def _control_keys(self, request: Request) -> Response:
        spec = await request.json()
        self.refuse_key(str(spec["key"]), int(spec.get("status", 401)))
        return JSONResponse({"key": "set"})

    async def _control_reset(self, request: Request) -> Response:
        self.reset()
        return JSONResponse({"reset": True})

    async def _control_clock(self, request: Request) -> Response:
        spec = await request.json()
        self.advance_clock(float(spec["advance_s"]))
        return JSONResponse({"advanced_s": spec["advance_s"]})

    async def _control_promises(self, request: Request) -> Response:
        spec = await request.json()
        self.promise_script(int(spec.get("every", 0)), bool(spec.get("keeps", False)))
        return JSONResponse({"promises": spec})


def _listening_socket(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


def _uvicorn(app: Starlette) -> uvicorn.Server:
    config = uvicorn.Config(
        app, lifespan="off", log_level="warning", access_log=False, timeout_graceful_shutdown=1
    )
    return uvicorn.Server(config)


async def _stall(request: Request, seconds: float) -> None:
    """Waits, but stops as soon as the client has gone."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await request.is_disconnected():
            return
        await asyncio.sleep(0.02)


async def _stream(events: Iterator[str | float], pause_s: float) -> AsyncIterator[str]:
    for number, event in enumerate(events):
        if number == 2 and pause_s:
            await asyncio.sleep(pause_s)
        if isinstance(event, float):  # thinking, in silence or between pieces of its summary
            await asyncio.sleep(event)
            continue
        yield event
        await asyncio.sleep(0)


class MessagesAPIProcess:
    """The server as its own process, scripted over HTTP; for stacks of real processes."""

    def __init__(self, *, api_key: str | None = None) -> None:
        self.api_key = api_key
        self.url = ""
        self._process: subprocess.Popen[str] | None = None
        self._last_rejections: list[dict] = []

    def start(self) -> MessagesAPIProcess:
        command = [sys.executable, "-m", "tests.support.messages_api", "--port", "0"]
        if self.api_key:
            command += ["--api-key", self.api_key]
        self._process = subprocess.Popen(
            command, stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2]
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line.startswith("listening on "):
            self.stop()
            raise RuntimeError(f"the local Messages API process did not start: {line!r}")
        self.url = line.removeprefix("listening on ").strip()
        return self

    def push(self, *specs: dict) -> None:
        """Queues answers given as `canned_from_spec` specs."""
        httpx.post(f"{self.url}/_control/queue", json=list(specs), timeout=5).raise_for_status()

    def requests(self) -> list[dict]:
        answer = httpx.get(f"{self.url}/_control/requests", timeout=5)
        answer.raise_for_status()
        return answer.json()

    def rejections(self) -> list[dict]:
        """The requests a rule of the API refused (`MessagesAPI.rejections`), as dicts; once
        the process has stopped, the ones it had refused by then."""
        if self._process is None:
            return list(self._last_rejections)
        answer = httpx.get(f"{self.url}/_control/rejections", timeout=5)
        answer.raise_for_status()
        return answer.json()

    def reset(self) -> None:
        httpx.post(f"{self.url}/_control/reset", timeout=5).raise_for_status()

    def fail_tool(self, name: str, status: int = 400) -> None:
        spec = {"tool": name, "status": status}
        httpx.post(f"{self.url}/_control/failing", json=spec, timeout=5).raise_for_status()

    def heal_tool(self, name: str) -> None:
        spec = {"tool": name, "status": 0}
        httpx.post(f"{self.url}/_control/failing", json=spec, timeout=5).raise_for_status()

    def refuse_key(self, key: str, status: int = 401) -> None:
        """Requests made with `key` are refused with `status` (401, 402, 403); 0 accepts it."""
        spec = {"key": key, "status": status}
        httpx.post(f"{self.url}/_control/keys", json=spec, timeout=5).raise_for_status()

    def pace(self, stall_s: float) -> None:
        """Every answer waits `stall_s` seconds first; 0 stops it."""
        spec = {"stall_s": stall_s}
        httpx.post(f"{self.url}/_control/pace", json=spec, timeout=5).raise_for_status()

    def skip_thinking(self, skipped: bool = True) -> None:
        """Answers come without a thinking block (adaptive thinking chose not to think)."""
        spec = {"skipped": skipped}
        httpx.post(f"{self.url}/_control/thinking", json=spec, timeout=5).raise_for_status()

    def fail_every(self, n: int, spec: dict | None = None) -> None:
        """Every `n`-th valid request answers with `spec`; `n` 0 stops it."""
        wanted = {"every": n, "spec": spec or {}}
        httpx.post(f"{self.url}/_control/every", json=wanted, timeout=5).raise_for_status()

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            with contextlib.suppress(httpx.HTTPError):
                self._last_rejections = self.rejections()
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None

    def __enter__(self) -> MessagesAPIProcess:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()


@pytest.fixture(scope="session")
def messages_api_server() -> Iterator[MessagesAPI]:
    """One server for the whole test session."""
    with MessagesAPI() as server:
        yield server


@pytest.fixture
def messages_api(messages_api_server: MessagesAPI) -> Iterator[MessagesAPI]:
    """The shared server with an empty queue and record for this test. The record outlives the
    test until the next one starts, so fixtures torn down later can read its `rejections()`."""
    messages_api_server.reset()
    yield messages_api_server
    messages_api_server.reset(keep_record=True)


def main() -> None:
    parser = argparse.ArgumentParser(description="A local Anthropic Messages API for tests.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--api-key", default=None, help="accept only this key (default: any)")
    parser.add_argument(
        "--min-cacheable-tokens",
        type=int,
        default=MIN_CACHEABLE_TOKENS,
        help="the shortest prefix the prompt cache keeps",
    )
    options = parser.parse_args()
    api = MessagesAPI(api_key=options.api_key, min_cacheable_tokens=options.min_cacheable_tokens)
    sock = _listening_socket(options.host, options.port)
    # the socket already listens, so a client may connect as soon as this line is out
    print(f"listening on http://{options.host}:{sock.getsockname()[1]}", flush=True)
    _uvicorn(api.app).run(sockets=[sock])


if __name__ == "__main__":
    main()
