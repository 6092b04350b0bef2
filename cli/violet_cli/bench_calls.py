"""Model calls (part of `violet bench`): how many calls of each kind a turn costs in the
Anthropic mode, how many were tried again, and how much of the main call is read from the cache
as one conversation grows.

One person talks to a local stack of real processes over the phone protocol, with the model
client on the real SDK against the repo's local Messages API server
(`tests/support/messages_api.py`): it keeps the documented rules of the 5.5 models, answers by
the offline model's rules, caches prompts as the API does, and records every request. Every
`BUSY_EVERY`-th request is answered 429 with a `retry-after-ms`, as a busy service would, so the
retries show. The person says what speaker A says in the LoCoMo conversations, with a
calculation handed to background work every `WORK_EVERY` turns, and waits for each answer.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import httpx
import websockets

from violet.models import JsonObject
from violet.models import tools as t
from violet_cli.bench import local_stack
from violet_cli.economy import answers_person, local_messages_api, locomo_lines, prompt_tokens

TURNS = 300
CACHE_TURNS = (50, 300)
SHARE_TURNS = 10
WORK_EVERY = 25
BUSY_EVERY = 40
BUSY = {"error": {"status": 429, "type": "rate_limit_error"}, "retry_after_ms": 200}
ANSWER_TIMEOUT_S = 120.0
SETTLE_S = 20.0
KINDS = ("main", "main tool round", "main telling a result", "work", "fold", "pick", "origin")
STRUCTURED = {"summary": "fold", "choice": "pick", "items": "origin"}


@dataclass(frozen=True)
class Calls:
    turns: int
    by_kind: Counter[str]  # answered requests
    retried: Counter[str]  # requests answered with a status that is tried again
    rejected: int  # requests the local API refused (each one a defect)
    # turn: the share of the input read from the cache by the calls answering the 10 turns up
    # to it
    cache_share: dict[int, float]
    seconds: float

    def as_dict(self) -> JsonObject:
        return {
            "turns": self.turns,
            "per_turn": {k: round(n / self.turns, 3) for k, n in sorted(self.by_kind.items())},
            "retried": dict(self.retried),
            "rejected": self.rejected,
            "cache_read_share": {str(k): round(v, 3) for k, v in self.cache_share.items()},
        }


def kind_of(body: JsonObject) -> str:
    """Which call a recorded request was, from its shape."""
    schema = ((body.get("output_config") or {}).get("format") or {}).get("schema") or {}
    for key, name in STRUCTURED.items():
        if key in schema.get("properties", {}):
            return name
    offered = {tool["name"] for tool in body.get("tools") or []}
    if t.FETCH_PAGE in offered:
        return "work"
    if t.RECORD_PROMISE not in offered:
        return "other"
    last = body["messages"][-1]["content"]
    blocks = last if isinstance(last, list) else [{"type": "text", "text": last}]
    if all(b.get("type") == "tool_result" for b in blocks):
        return "main tool round"
    if any(str(b.get("text", "")).startswith(t.UPDATE_PREFIX) for b in blocks):
        return "main telling a result"
    return "main" if answers_person(body) else "other"


def lines(data_dir: Path) -> list[str]:
    said = locomo_lines(data_dir / "locomo_dev.json", TURNS)
    for number in range(WORK_EVERY - 1, TURNS, WORK_EVERY):
        said[number] = f"calculate {number + 3} * {number + 7}"
    return said


async def _talk(url: str, token: str, says: list[str]) -> None:
    async with websockets.connect(url, max_size=None) as socket:
        await socket.send(json.dumps({"type": "hello", "token": token, "since": 0}))
        for number, text in enumerate(says):
            await socket.send(json.dumps({"type": "say", "id": f"s{number}", "text": text}))
            deadline = time.monotonic() + ANSWER_TIMEOUT_S
            while True:
                remaining = deadline - time.monotonic()
                frame = json.loads(await asyncio.wait_for(socket.recv(), remaining))
                if frame.get("type") == "message" and frame.get("reply_to") == f"s{number}":
                    break
        await asyncio.sleep(SETTLE_S)  # the last results and captures


def measure_calls(data_dir: Path) -> Calls:
    says = lines(data_dir)
    with local_messages_api() as api:
        spec = {"every": BUSY_EVERY, "spec": BUSY}
        httpx.post(f"{api}/_control/every", json=spec, timeout=10).raise_for_status()
        env = {"ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": api}
        with local_stack(env) as stack:
            began = time.monotonic()
            asyncio.run(_talk(stack.live_url, stack.token("calls"), says))
            seconds = time.monotonic() - began
        recorded = httpx.get(f"{api}/_control/requests", timeout=120).json()
    return count_calls(recorded, len(says), seconds)


def count_calls(recorded: list[JsonObject], turns: int, seconds: float) -> Calls:
    answered = [r for r in recorded if r.get("status") == 200]
    retried = Counter(kind_of(r["body"]) for r in recorded if r.get("status") in (429, 529))
    mains = [r for r in answered if kind_of(r["body"]) == "main" and r.get("usage")]
    shares = {}
    for turn in CACHE_TURNS:
        if turn <= len(mains):  # the calls answering the 10 turns up to it, a fold among them
            usages = [r["usage"] for r in mains[turn - SHARE_TURNS : turn]]
            read = sum(usage["cache_read_input_tokens"] for usage in usages)
            shares[turn] = read / sum(prompt_tokens(usage) for usage in usages)
    return Calls(
        turns=turns,
        by_kind=Counter(kind_of(r["body"]) for r in answered),
        retried=retried,
        rejected=sum(1 for r in recorded if r.get("rejected")),
        cache_share=shares,
        seconds=seconds,
    )


def render_calls(calls: Calls) -> str:
    rows = "\n".join(
        f"| {kind} | {calls.by_kind.get(kind, 0)} | {calls.by_kind.get(kind, 0) / calls.turns:.2f}"
        f" | {calls.retried.get(kind, 0)} |"
        for kind in KINDS
    )
    shares = ", ".join(
        f"turns {k - SHARE_TURNS + 1} to {k}: {v:.1%}" for k, v in calls.cache_share.items()
    )
    return f"""## Model calls per turn

One person says {calls.turns} things to a local stack of the five services in the Anthropic mode:
the model client runs on the real SDK against the local Messages API server, which keeps the
documented rules of the configured models (`docs/model-rules.md`) and answers by the offline
rules. The lines are what speaker A says in the LoCoMo conversations, with a calculation handed
to background work every {WORK_EVERY} turns. Every {BUSY_EVERY}th request is answered 429
(`retry-after-ms: 200`); those are the retries counted. The run took {calls.seconds:.0f} s.

| call | answered | per turn | answered 429 first |
|---|---:|---:|---:|
{rows}

Requests the local API refused: {calls.rejected}. Share of the main call's input read from the
prompt cache, over the calls answering the person: {shares}.
"""
