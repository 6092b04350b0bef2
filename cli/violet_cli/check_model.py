"""`violet check-model`: a few small real calls, through Violet's own model client, that show
whether the configured key, models and kinds of call work before people depend on them.

One call per configured model and per kind of call: the main conversation (streamed), the
background work (streamed, with its tools), a structured answer on the fast model, and the
main call once more to see the prompt cache written and then read. Each result is one line in
plain words; the command exits 1 when any check failed, 2 when the API could not be reached or
no key is set.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from violet.models import (
    DEFAULT_FAST_MODEL,
    DEFAULT_MAIN_MODEL,
    Candidate,
    ModelClient,
    ModelError,
    ModelMessage,
    ModelRejected,
    ModelUnreachable,
    Reply,
    UsageLedger,
    make_model_client,
    pick,
)
from violet.models import tools as t
from violet.models.anthropic_client import DEFAULT_BASE_URL
from violet.models.cache import cached_system
from violet.settings import CommonSettings, load_settings

PERSON = "violet-check-model"
# Long enough to be cached by either model (512 tokens at least), and the same every run.
CACHED_INSTRUCTIONS = " ".join(
    f"Rule {number}: answer the person kindly, briefly and in their own language."
    for number in range(1, 61)
)
OK, FAILED = "ok    ", "FAILED"


@dataclass(frozen=True)
class Check:
    name: str
    run: Callable[[ModelClient], Awaitable[str]]  # what it found, in a few words


class Unreachable(Exception):
    """No answer at all from the API's address: nothing else can be checked."""


def check_model() -> int:
    # Each check tells its own outcome; the client's warnings would only repeat it.
    logging.basicConfig(level=logging.ERROR)
    settings = load_settings(CommonSettings)
    if not settings.anthropic_api_key:
        print("No ANTHROPIC_API_KEY is set: Violet runs on its offline model; nothing to check.")
        return 2
    main_model = settings.main_model or DEFAULT_MAIN_MODEL
    fast_model = settings.fast_model or DEFAULT_FAST_MODEL
    address = settings.anthropic_base_url or DEFAULT_BASE_URL
    key = settings.anthropic_api_key
    print(f"Checking {address} with the key ending in …{key[-4:]}")
    client = make_model_client(
        api_key=key,
        base_url=address,
        main_model=main_model,
        fast_model=fast_model,
        timeout_s=60,
        max_retries=1,
        ledger=UsageLedger(),
    )
    return asyncio.run(_run_all(client, checks(main_model, fast_model), address))


def checks(main_model: str, fast_model: str) -> list[Check]:
    return [
        Check(f"{main_model} answers the conversation (streamed)", _main_call),
        Check(f"{main_model} does background work with its tools (streamed)", _work_call),
        Check(f"{fast_model} gives a structured answer", _structured_call),
        Check("the prompt cache is written and then read", _cache_calls),
    ]


async def _run_all(client: ModelClient, to_run: list[Check], address: str) -> int:
    failed = 0
    try:
        for number, check in enumerate(to_run):
            began = time.monotonic()
            try:
                found = await check.run(client)
            except ModelUnreachable as error:
                raise Unreachable from error
            except ModelError as error:
                print(f"{FAILED} {check.name}: {_plain(error)}")
                failed += 1
                if (
                    number == 0
                    and isinstance(error, ModelRejected)
                    and error.status_code
                    in (
                        401,
                        403,
                    )
                ):
                    print("The other checks need an accepted key; they were not run.")
                    return 1
                continue
            if number == 0:
                print(f"{OK} the key was accepted")
            print(f"{OK} {check.name}: {found} ({time.monotonic() - began:.1f} s)")
    except Unreachable:
        print(f"Cannot reach {address}: no network connection to the Anthropic API from here.")
        return 2
    finally:
        await client.aclose()
    print("Every check passed." if not failed else f"{failed} of {len(to_run)} checks failed.")
    return 1 if failed else 0


def _plain(error: ModelError) -> str:
    if isinstance(error, ModelRejected):
        if error.status_code in (401, 403):
            return f"the key was refused ({error})"
        if error.status_code == 404:
            return f"the model was not found ({error})"
    return str(error)


async def _main_call(client: ModelClient) -> str:
    reply = await client.reply(
        tier="main",
        system="You are checking that you can be reached. Answer in one short sentence.",
        messages=[{"role": "user", "content": "Hello, are you there?"}],
        tools=t.MAIN_TOOLS,
        person=PERSON,
    )
    return _said(reply)


async def _work_call(client: ModelClient) -> str:
    reply = await client.reply(
        tier="work",
        system="You are checking that background work can be reached. Do not use any tool.",
        messages=[{"role": "user", "content": "Reply with the single word: ready."}],
        tools=t.WORK_TOOLS,
        person=PERSON,
        tool_choice="none",
    )
    return _said(reply)


async def _structured_call(client: ModelClient) -> str:
    """One routing pick, as Violet asks it: the shape of every structured call."""
    topic = Candidate("check", "checking that Violet can reach her models", 0.9)
    chosen = await pick(
        client, request="Are you able to reach your models?", candidates=[topic], person=PERSON
    )
    return f"structured output accepted (picked {chosen.choice!r} at {chosen.confidence:.2f})"


async def _cache_calls(client: ModelClient) -> str:
    system = cached_system(CACHED_INSTRUCTIONS)
    asked: list[ModelMessage] = [{"role": "user", "content": "Say hello in three words."}]
    first = await client.reply(
        tier="main", system=system, messages=list(asked), tools=(), person=PERSON
    )
    second = await client.reply(
        tier="main", system=system, messages=list(asked), tools=(), person=PERSON
    )
    written = first.usage.cache_write_tokens + first.usage.cache_read_tokens
    read = second.usage.cache_read_tokens
    if not written or not read:
        raise ModelError(
            f"no cache use seen: the first call wrote {first.usage.cache_write_tokens} tokens, "
            f"the second read {read}"
        )
    return f"{written} tokens cached, {read} read back"


def _said(reply: Reply) -> str:
    words = " ".join(reply.text.split())
    return f'answered "{words[:60]}"' if words else "answered without words"
