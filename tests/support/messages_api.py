"""A local server that speaks the Anthropic Messages API, for tests.

`POST /v1/messages`, streaming (SSE, the same events as the API) and not, with the API's JSON
error shape. It answers from a queue of canned responses a test sets, and, when the queue is
empty, by running the offline model's rules on the request, so a whole stack can run in the
Anthropic mode against it. It records every request (JSON body and headers) with the usage it
answered.

Prompt caching works as the API's does, so tests can assert cache reads: each block marked with
`cache_control` (at most 4) ends a prefix (tools, system, messages) that is cached for its
lifetime (5 minutes, or `"ttl": "1h"`) from its last use, once it is at least
`min_cacheable_tokens` long; a later request reads back the longest cached prefix that ends at
one of its breakpoints or up to 20 blocks before one. `usage` then splits the prompt into
`cache_read_input_tokens`, `cache_creation_input_tokens` and `input_tokens` (the rest). Tokens
are estimated as a quarter of the characters. `advance_clock(s)` moves the cache's time on.

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
(`{"text": ...}`, `{"tool_use": {"name", "input"}}`, `{"error": {"status", "type", "message"}}`,
optionally `"stall_s"`), `GET /_control/requests`, `POST /_control/reset`,
`POST /_control/clock` (`{"advance_s": S}`) and `POST /_control/promises` (`{"every": N,
"keeps": bool}`; `every` 0 stops it).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from violet.models import tools as violet_tools
from violet.models.offline_rules import open_items, respond
from violet.models.offline_structured import structured_answer
from violet.models.offline_text import block_text, estimate_tokens

_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_WORK_TOOLS = {tool.name for tool in violet_tools.WORK_TOOLS}

MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20
MIN_CACHEABLE_TOKENS = 1024
TTL_S = {"5m": 300.0, "1h": 3600.0}


@dataclass
class Canned:
    """One scripted answer: a message (content blocks) or an API error, optionally after a
    stall. `mid_stream` sends the error inside a started stream instead of as the status;
    `stream_pause_s` pauses a stream after its first events."""

    content: list[dict] = field(default_factory=list)
    stop_reason: str | None = None
    error: tuple[int, str, str] | None = None
    stall_s: float = 0.0
    mid_stream: bool = False
    retry_after_s: float | None = None
    stream_pause_s: float = 0.0


def text(words: str, **options: object) -> Canned:
    return Canned(content=[{"type": "text", "text": words}], **options)


def tool_call(name: str, tool_input: dict, *, before: str = "", **options: object) -> Canned:
    content = [{"type": "text", "text": before}] if before else []
    content.append(
        {
            "type": "tool_use",
            "id": f"toolu_{uuid.uuid4().hex[:24]}",
            "name": name,
            "input": tool_input,
        }
    )
    return Canned(content=content, **options)


def error(status: int, kind: str, message: str, **options: object) -> Canned:
    return Canned(error=(status, kind, message), **options)


def overloaded(**options: object) -> Canned:
    return error(529, "overloaded_error", "Overloaded", **options)


def rate_limited(**options: object) -> Canned:
    return error(
        429, "rate_limit_error", "Number of requests has exceeded your rate limit", **options
    )


def invalid_request(message: str, **options: object) -> Canned:
    return error(400, "invalid_request_error", message, **options)


def stall(seconds: float) -> Canned:
    """No answer for `seconds` (the client times out first), then a short text."""
    return text("late", stall_s=seconds)


def canned_from_spec(spec: dict) -> Canned:
    options = {
        "stall_s": float(spec.get("stall_s", 0.0)),
        "mid_stream": bool(spec.get("mid_stream", False)),
        "stream_pause_s": float(spec.get("stream_pause_s", 0.0)),
    }
    if "error" in spec:
        e = spec["error"]
        return error(int(e["status"]), e["type"], e.get("message", e["type"]), **options)
    if "tool_use" in spec:
        call = spec["tool_use"]
        return tool_call(
            call["name"], call.get("input", {}), before=spec.get("text", ""), **options
        )
    if "content" in spec:
        return Canned(content=spec["content"], stop_reason=spec.get("stop_reason"), **options)
    return text(spec.get("text", ""), **options)


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict
    usage: dict | None = None  # what the answer said it used; None for a refused request


class ApiError(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


def error_response(
    status: int, kind: str, message: str, retry_after_s: float | None = None
) -> JSONResponse:
    request_id = f"req_{uuid.uuid4().hex[:24]}"
    headers = {"request-id": request_id}
    if retry_after_s is not None:
        headers["retry-after"] = f"{retry_after_s:g}"
    body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": request_id}
    return JSONResponse(body, status_code=status, headers=headers)


def _authenticate(request: Request, api_key: str | None) -> None:
    given = request.headers.get("x-api-key")
    bearer = request.headers.get("authorization", "")
    if not given and bearer.lower().startswith("bearer "):
        given = bearer[7:].strip()
    if not given:
        raise ApiError(401, "authentication_error", "x-api-key header is required")
    if api_key is not None and given != api_key:
        raise ApiError(401, "authentication_error", "invalid x-api-key")


def validate(body: object) -> dict:
    """The checks of the real API that tests lean on, with its wording where it matters."""
    if not isinstance(body, dict):
        raise ApiError(400, "invalid_request_error", "The request body is not a JSON object.")
    for key, kind in (("model", str), ("max_tokens", int), ("messages", list)):
        if not isinstance(body.get(key), kind):
            raise ApiError(400, "invalid_request_error", f"{key}: Field required")
    if body["max_tokens"] < 1:
        raise ApiError(400, "invalid_request_error", "max_tokens: must be at least 1")
    messages = body["messages"]
    if not messages or messages[0].get("role") != "user":
        raise ApiError(
            400, "invalid_request_error", 'messages: the first message must use the "user" role'
        )
    for index, message in enumerate(messages):
        if message.get("role") not in ("user", "assistant"):
            raise ApiError(
                400,
                "invalid_request_error",
                f'messages.{index}.role: must be "user" or "assistant"',
            )
        _check_tool_pairs(messages, index)
        _check_text(message.get("content"), f"messages.{index}")
    system = body.get("system")
    if system is not None and not isinstance(system, str):
        if not isinstance(system, list) or any(b.get("type") != "text" for b in system):
            raise ApiError(400, "invalid_request_error", "system: must be a string or text blocks")
        _check_text(system, "system")
    _check_breakpoints(body)
    tools = body.get("tools") or []
    names = set()
    for index, tool in enumerate(tools):
        if not _TOOL_NAME.match(str(tool.get("name", ""))):
            raise ApiError(400, "invalid_request_error", f"tools.{index}.name: invalid name")
        if (tool.get("input_schema") or {}).get("type") != "object":
            raise ApiError(
                400,
                "invalid_request_error",
                f"tools.{index}.input_schema.type: Input should be 'object'",
            )
        names.add(tool["name"])
    choice = body.get("tool_choice") or {}
    if choice.get("type") == "tool" and choice.get("name") not in names:
        raise ApiError(
            400,
            "invalid_request_error",
            f"tool_choice: tool '{choice.get('name')}' not found in tools",
        )
    return body


def _check_tool_pairs(messages: list[dict], index: int) -> None:
    message = messages[index]
    if message["role"] == "assistant":
        following = messages[index + 1] if index + 1 < len(messages) else {}
        answered = _ids(following, "tool_result", "tool_use_id")
        missing = [i for i in _ids(message, "tool_use", "id") if i not in answered]
        if missing:
            raise ApiError(
                400,
                "invalid_request_error",
                f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message.",
            )
        return
    previous = messages[index - 1] if index > 0 else {}
    offered = _ids(previous, "tool_use", "id") if previous.get("role") == "assistant" else set()
    stray = [i for i in _ids(message, "tool_result", "tool_use_id") if i not in offered]
    if stray:
        raise ApiError(
            400,
            "invalid_request_error",
            f"messages.{index}.content: unexpected `tool_use_id` found in `tool_result` "
            f"blocks: {', '.join(stray)}. Each `tool_result` block must have a "
            "corresponding `tool_use` block in the previous message.",
        )


def _check_text(content: object, where: str) -> None:
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    for block in blocks:
        if block.get("type") == "text" and not str(block.get("text", "")).strip():
            raise ApiError(
                400, "invalid_request_error", f"{where}: text content blocks must be non-empty"
            )


def _check_breakpoints(body: dict) -> None:
    marks = [unit.get("cache_control") for unit in _units(body) if unit.get("cache_control")]
    if len(marks) > MAX_BREAKPOINTS:
        raise ApiError(
            400,
            "invalid_request_error",
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(marks)}.",
        )
    lifetimes = []
    for mark in marks:
        if mark.get("type") != "ephemeral" or mark.get("ttl", "5m") not in TTL_S:
            raise ApiError(400, "invalid_request_error", f"cache_control: invalid value {mark}")
        lifetimes.append(TTL_S[mark.get("ttl", "5m")])
    if lifetimes != sorted(lifetimes, reverse=True):
        raise ApiError(
            400,
            "invalid_request_error",
            "a cache_control entry with a longer ttl must come before any with a shorter one",
        )


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


def _ids(message: dict, block_type: str, key: str) -> list[str]:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return [b.get(key) for b in blocks if isinstance(b, dict) and b.get("type") == block_type]


def rules_answer(body: dict) -> list[dict]:
    """What the offline model would answer to this request."""
    choice = body.get("tool_choice") or {}
    if choice.get("type") == "tool":
        prompt = block_text(body["messages"][-1].get("content"))
        try:
            answer = structured_answer(choice["name"], prompt)
        except (KeyError, ValueError) as failure:
            missing = f"the local server has no answer for tool {choice['name']!r}"
            raise ApiError(400, "invalid_request_error", missing) from failure
        return [
            {
                "type": "tool_use",
                "id": f"toolu_{uuid.uuid4().hex[:24]}",
                "name": choice["name"],
                "input": answer,
            }
        ]
    system = body.get("system") or ""
    system = system if isinstance(system, str) else block_text(system)
    offered = {tool["name"] for tool in body.get("tools") or []}
    tier = "work" if offered & _WORK_TOOLS else "main"
    return respond(tier=tier, system=system, messages=body["messages"], offered=offered)


def message_json(body: dict, content: list[dict], stop_reason: str | None, prompt: dict) -> dict:
    """The answer message; `prompt` is the input side of its usage (`PromptCache.use`)."""
    answer_text = "".join(
        b.get("text", "") if b["type"] == "text" else json.dumps(b.get("input")) for b in content
    )
    uses_tools = any(b["type"] == "tool_use" for b in content)
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": content,
        "stop_reason": stop_reason or ("tool_use" if uses_tools else "end_turn"),
        "stop_sequence": None,
        "usage": {**prompt, "output_tokens": max(1, estimate_tokens(answer_text))},
    }


@dataclass(frozen=True)
class Segment:
    """One unit of a request as the cache sees it: `key` names the whole prefix up to and
    including it; `ttl_s` is set when it carries a breakpoint."""

    key: str
    tokens: int
    ttl_s: float | None


def segments(body: dict) -> list[Segment]:
    chain = hashlib.sha256(str(body.get("model")).encode())
    found = []
    for unit in _units(body):
        mark = unit.pop("cache_control", None)
        chain.update(json.dumps(unit, sort_keys=True).encode())
        ttl_s = TTL_S[mark.get("ttl", "5m")] if mark else None
        found.append(Segment(chain.hexdigest(), estimate_tokens(json.dumps(unit)), ttl_s))
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
        """The end of the cached prefix found from breakpoint `mark`, looking back; -1: none."""
        for index in range(mark, max(-1, mark - LOOKBACK_BLOCKS - 1), -1):
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
            return [_scripted_call(violet_tools.RECORD_PROMISE, {"text": promise})]
        system = body.get("system") or ""
        system = system if isinstance(system, str) else block_text(system)
        promises = [key for kind, key, _ in open_items(system) if kind == "promise"]
        if self.keeps and promises and (self.turns + 1) % self.every == 0:
            return [_scripted_call(violet_tools.KEEP_PROMISE, {"promise_id": promises[0]})]
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
    first = content if isinstance(content, str) else block_text(content[:1])
    return not first.startswith(violet_tools.UPDATE_PREFIX)


def _scripted_call(name: str, tool_input: dict) -> dict:
    return {
        "type": "tool_use",
        "id": f"toolu_{uuid.uuid4().hex[:24]}",
        "name": name,
        "input": tool_input,
    }


def _sse(event: str, data: dict) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def _chunks(text: str, size: int = 16) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


def _opening_and_deltas(block: dict) -> tuple[dict, list[dict]]:
    if block["type"] == "text":
        parts = _chunks(block["text"])
        return {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in parts]
    parts = ["", *_chunks(json.dumps(block["input"]))]
    deltas = [{"type": "input_json_delta", "partial_json": p} for p in parts]
    return {**block, "input": {}}, deltas


def sse_events(message: dict, failure: tuple[int, str, str] | None = None) -> Iterator[str]:
    """The stream of a message, event by event, as the API sends it."""
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "usage": {**message["usage"], "output_tokens": 1},
    }
    yield _sse("message_start", {"type": "message_start", "message": start})
    yield _sse("ping", {"type": "ping"})
    if failure is not None:
        _status, kind, words = failure
        yield _sse("error", {"type": "error", "error": {"type": kind, "message": words}})
        return
    for index, block in enumerate(message["content"]):
        opening, deltas = _opening_and_deltas(block)
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": opening},
        )
        for delta in deltas:
            yield _sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": message["usage"]["output_tokens"]},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


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
        self._skew_s = 0.0
        self.cache = PromptCache(min_cacheable_tokens, lambda: time.monotonic() + self._skew_s)
        self._promises: PromiseScript | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""
        self.app = Starlette(
            routes=[
                Route("/v1/messages", self._messages, methods=["POST"]),
                Route("/_control/queue", self._control_queue, methods=["POST"]),
                Route("/_control/requests", self._control_requests, methods=["GET"]),
                Route("/_control/reset", self._control_reset, methods=["POST"]),
                Route("/_control/failing", self._control_failing, methods=["POST"]),
                Route("/_control/clock", self._control_clock, methods=["POST"]),
                Route("/_control/promises", self._control_promises, methods=["POST"]),
            ]
        )
        # Forced tool calls (by tool name) answered with an error until cleared.
        self._failing: dict[str, tuple[int, str, str]] = {}

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

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self._requests.clear()
            self.cache.clear()
            self.cache.min_tokens = self.min_cacheable_tokens
            self._promises = None

    def advance_clock(self, seconds: float) -> None:
        """Moves the prompt cache's time on, so entries can outlive their lifetime in a test."""
        with self._lock:
            self._skew_s += seconds

    def promise_script(self, every: int, keeps: bool = False) -> None:
        """Main calls record (and keep) promises as `PromiseScript` says; `every` 0 stops it."""
        with self._lock:
            self._promises = PromiseScript(every, keeps) if every > 0 else None

    def _scripted(self, body: dict) -> list[dict] | None:
        with self._lock:
            return self._promises.answer(body) if self._promises else None

    def fail_tool(self, name: str, status: int = 400) -> None:
        """Every forced call of tool `name` fails with `status` until `heal_tool(name)`."""
        kind = "overloaded_error" if status == 529 else "invalid_request_error"
        with self._lock:
            self._failing[name] = (status, kind, f"{name} is failing on purpose")

    def heal_tool(self, name: str) -> None:
        with self._lock:
            self._failing.pop(name, None)

    def _failure_for(self, body: dict) -> tuple[int, str, str] | None:
        choice = body.get("tool_choice") or {}
        with self._lock:
            return (
                self._failing.get(choice.get("name", "")) if choice.get("type") == "tool" else None
            )

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
            _authenticate(request, self.api_key)
            validate(body)
            forced_failure = self._failure_for(body)
            if forced_failure is not None:
                return error_response(*forced_failure)
            canned = self._next()
            if canned is not None and canned.stall_s:
                await _stall(request, canned.stall_s)
            streamed = bool(body.get("stream"))
            if canned is not None and canned.error and not (canned.mid_stream and streamed):
                return error_response(*canned.error, retry_after_s=canned.retry_after_s)
            if canned is not None:
                content = canned.content
            else:
                content = self._scripted(body) or rules_answer(body)
            stop_reason = canned.stop_reason if canned is not None else None
        except ApiError as failure:
            return error_response(failure.status, failure.kind, failure.message)
        with self._lock:
            prompt = self.cache.use(segments(body))
        message = message_json(body, content, stop_reason, prompt)
        record.usage = message["usage"]
        if streamed:
            failure = canned.error if canned is not None else None
            pause_s = canned.stream_pause_s if canned is not None else 0.0
            return StreamingResponse(
                _stream(sse_events(message, failure), pause_s),
                media_type="text/event-stream",
                headers={"request-id": f"req_{uuid.uuid4().hex[:24]}"},
            )
        return JSONResponse(message, headers={"request-id": f"req_{uuid.uuid4().hex[:24]}"})

    async def _control_queue(self, request: Request) -> Response:
        specs = await request.json()
        self.push(*(canned_from_spec(spec) for spec in specs))
        return JSONResponse({"queued": len(specs)})

    async def _control_requests(self, request: Request) -> Response:
        return JSONResponse([vars(r) for r in self.requests])

    async def _control_failing(self, request: Request) -> Response:
        spec = await request.json()
        if spec.get("status"):
            self.fail_tool(spec["tool"], int(spec["status"]))
        else:
            self.heal_tool(spec["tool"])
        return JSONResponse({"failing": spec})

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


async def _stream(events: Iterator[str], pause_s: float) -> AsyncIterator[str]:
    for number, event in enumerate(events):
        if number == 2 and pause_s:
            await asyncio.sleep(pause_s)
        yield event
        await asyncio.sleep(0)


class MessagesAPIProcess:
    """The server as its own process, scripted over HTTP; for stacks of real processes."""

    def __init__(self, *, api_key: str | None = None) -> None:
        self.api_key = api_key
        self.url = ""
        self._process: subprocess.Popen[str] | None = None

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
        httpx.post(f"{self.url}/_control/queue", json=list(specs), timeout=5).raise_for_status()

    def requests(self) -> list[dict]:
        answer = httpx.get(f"{self.url}/_control/requests", timeout=5)
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

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
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
    """The shared server with an empty queue and record for this test."""
    messages_api_server.reset()
    yield messages_api_server
    messages_api_server.reset()


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
