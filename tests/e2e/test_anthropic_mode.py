"""The Anthropic mode end to end, on the real SDK against the local Messages API that keeps the
configured models' documented rules (the suite fails on a request it refuses): while the API
misbehaves as a busy service does, every say is answered exactly once and memory, routing and
every kind of background work still work; what the model writes of its inner workings never
reaches the phone; a slow answer shows that Violet is thinking."""

from __future__ import annotations

import contextlib
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest

from tests.integration.test_phone_protocol import assert_frames_leak_nothing
from tests.support.device import Device
from tests.support.smtp import SmtpSink
from tests.support.stack import Stack, running_stack
from tests.support.waiting import eventually
from tests.support.web import LocalWeb

RESULT_TIMEOUT_S = 90.0
LATE_FRAMES_S = 1.5
ENV = {"VIOLET_SAYS_PER_MINUTE": "100000", "VIOLET_SAY_BURST": "1000"}
# Each misbehaviour, every so many requests that passed the API's checks.
BUSY = {
    "rate limited": (
        3,
        {"error": {"status": 429, "type": "rate_limit_error"}, "retry_after_ms": 80},
    ),
    "overloaded": (4, {"error": {"status": 529, "type": "overloaded_error"}}),
    "failing mid-stream": (
        5,
        {"error": {"status": 529, "type": "overloaded_error"}, "mid_stream": True},
    ),
    "cut short": (4, {"cut": {"text": "Let me think about"}}),
}


@dataclass
class World:
    stack: Stack
    web: LocalWeb
    smtp: SmtpSink


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    web, smtp = LocalWeb().start(), SmtpSink().start()
    env = {
        **ENV,
        "VIOLET_SEARCH_URL": web.search_url,
        "VIOLET_SMTP_URL": smtp.url,
        "VIOLET_FETCH_BLOCK_PRIVATE": "false",  # the local web is on loopback
    }
    try:
        with running_stack(tmp_path_factory.mktemp("busy"), "sqlite", "anthropic", env) as stack:
            yield World(stack, web, smtp)
    finally:
        web.stop()
        smtp.stop()


@pytest.fixture
async def phone(world: World) -> AsyncIterator[Device]:
    device, _ = await Device.open(world.stack.live_url, world.stack.token(f"p-{uuid.uuid4().hex}"))
    yield device
    assert_frames_leak_nothing(device.seen)
    await device.close()


def later(device: Device, words: str):  # type: ignore[no-untyped-def]
    return device.until(
        lambda f: (
            f["type"] == "message"
            and f["from"] == "violet"
            and "reply_to" not in f
            and words.lower() in f["text"].lower()
        ),
        RESULT_TIMEOUT_S,
    )


async def answered_once_each(world: World, device: Device, ids: list[str]) -> None:
    """Waits until the stack has nothing left to do and every frame is read, then counts the
    answers of each say."""
    await eventually(lambda: not world.stack.unfinished(), "settled", timeout_s=RESULT_TIMEOUT_S)
    with contextlib.suppress(TimeoutError):
        while True:  # a second answer to a say would arrive among these
            await device.next(timeout=LATE_FRAMES_S)
    answers = Counter(f.get("reply_to") for f in device.seen if f["type"] == "message")
    assert [answers[i] for i in ids] == [1] * len(ids), answers


@pytest.mark.parametrize("misbehaviour", list(BUSY))
async def test_every_kind_of_work_gets_done_while_the_api_misbehaves(
    world: World, phone: Device, misbehaviour: str
) -> None:
    api = world.stack.model_api
    assert api is not None
    every, spec = BUSY[misbehaviour]
    api.fail_every(every, spec)
    try:
        said = [await phone.say("My cat is called Miso.")]
        await phone.answer_to(said[-1], RESULT_TIMEOUT_S)
        [fact] = await phone.memory_page(1, RESULT_TIMEOUT_S)  # kept in the background
        assert "Miso" in fact["text"]
        said.append(await phone.say("What is my cat called?"))
        recalled = await phone.answer_to(said[-1], RESULT_TIMEOUT_S)
        url = world.web.add_page(f"/{uuid.uuid4().hex}", "Tide Tables", "High tide is at 6 pm.")
        said.append(await phone.say(f"look up {url}"))
        assert "High tide is at 6 pm." in (await later(phone, "Tide Tables"))["text"]
        said.append(await phone.say("calculate 17*23"))
        await later(phone, "391")
        said.append(await phone.say("write a note shopping: bread, eggs and tea"))
        await later(phone, '"Shopping"')
        address = f"a-{uuid.uuid4().hex[:6]}@example.org"
        said.append(await phone.say(f"send an email to {address} saying see you at six"))
        await later(phone, f"send an email to {address}")
        said.append(await phone.say("yes"))
        assert (await world.smtp.wait_for(address, RESULT_TIMEOUT_S)).body == "see you at six"
        await answered_once_each(world, phone, said)
    finally:
        api.fail_every(0)
    assert "Miso" in recalled["text"]


@pytest.mark.expects_fallbacks
async def test_refusals_are_told_plainly_and_every_say_is_still_answered_once(
    world: World, phone: Device
) -> None:
    api = world.stack.model_api
    assert api is not None
    api.fail_every(2, {"refusal": "general_harms"})
    try:
        said = [
            await phone.say(text)
            for text in (
                "My favourite colour is teal.",
                "calculate 6*7",
                "How are you today?",
                "write a note about the picnic",
                "What is my favourite colour?",
            )
        ]
        await phone.answers_to(*said, timeout=RESULT_TIMEOUT_S)
        await answered_once_each(world, phone, said)
    finally:
        api.fail_every(0)
    answers = [f["text"] for f in phone.seen if f["type"] == "message" and f["from"] == "violet"]
    assert all(text.strip() for text in answers)


async def test_what_the_model_writes_of_its_inner_workings_never_reaches_the_phone(
    world: World, phone: Device
) -> None:
    api = world.stack.model_api
    assert api is not None
    leaky = (
        "I gave it to a work session with start_work (p_1a2b3c4d) on claude-opus-5-5; fold in "
        "the egg whites, pay by credit card, and here is a summary of the bus route."
    )
    api.push({"text": leaky})
    answer = await phone.ask("hello there")
    assert answer["text"] == (
        "I gave it to a background task with my background work on; fold in the egg whites, "
        "pay by credit card, and here is a summary of the bus route."
    )


async def test_a_slow_answer_shows_that_violet_is_thinking_and_then_clears_it(
    world: World, phone: Device
) -> None:
    api = world.stack.model_api
    assert api is not None
    api.push({"text": "Sorry to keep you waiting.", "stall_s": 2.5})
    answer = await phone.ask("are you there?")
    assert answer["text"] == "Sorry to keep you waiting."
    # cleared before the answer is stored, so the line never outlives it
    lines = [f["text"] for f in phone.seen if f["type"] == "activity"]
    assert lines == ["Thinking it over", ""]
