"""Overload, over the real websocket: when memory cannot be checked Violet says so plainly (not "I
don't know"), and when a gateway holds as many unanswered says as it allows, or the session has
as many people's turns waiting as it takes, a new say is refused with `unavailable` before
anything is stored, the connection goes on, and the same say sent again later is answered once.

Memory is stopped in these tests, so every turn waits out the recall (a few seconds here): that
keeps a say in flight long enough for the next one to meet the bound."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.test_phone_protocol import assert_frames_leak_nothing
from tests.support.device import Device
from tests.support.stack import Stack, running_stack
from tests.support.waiting import eventually
from violet.models import offline_phrases as phrases

# A gateway that holds two unanswered says, a session that takes one person's turns at a time.
OVERLOAD_ENV = {
    "VIOLET_SAYS_IN_FLIGHT": "2",
    "VIOLET_TURN_BACKLOG": "1",
    "VIOLET_RECALL_TIMEOUT_S": "2",
    "VIOLET_RECALL_WAIT_S": "4",
}


@pytest.fixture(scope="module")
def memoryless_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    home: Path = tmp_path_factory.mktemp("violet-overload")
    with running_stack(home, "sqlite", env=OVERLOAD_ENV) as stack:
        stack.stop("memory")
        yield stack


def person() -> str:
    return "busy-" + uuid.uuid4().hex[:8]


async def say_until_taken(device: Device, text: str, said: str = "") -> str:
    """Says `text`, and again with the same id while Violet is full (as a device should): the
    turns of the test before may still be finishing. Returns the say's id."""
    said = said or uuid.uuid4().hex

    async def taken() -> bool:
        await device.say(text, message_id=said)
        reply = await device.until(lambda f: f["type"] == "error" or f.get("id") == said)
        if reply["type"] == "error":
            assert reply["code"] == "unavailable", reply
            return False
        return True

    await eventually(taken, f"{text!r} taken", timeout_s=30, every_s=0.2)
    return said


def stored_texts(stack: Stack, text: str) -> int:
    return len(stack.rows("session", "SELECT seq FROM messages WHERE text = :text", text=text))


async def test_a_question_about_the_person_while_memory_is_down_says_she_cant_check_now(
    memoryless_stack: Stack,
) -> None:
    device, _ = await Device.open(memoryless_stack.live_url, memoryless_stack.token(person()))
    asked = await say_until_taken(device, "What is my favourite colour?")
    answer = await device.answer_to(asked, timeout=30)
    assert answer["text"] == phrases.CANT_CHECK["en"]
    assert_frames_leak_nothing(device.seen)
    await device.close()


async def test_a_say_past_the_gateways_bound_is_refused_unstored_and_answered_once_when_sent_again(
    memoryless_stack: Stack,
) -> None:
    device, _ = await Device.open(memoryless_stack.live_url, memoryless_stack.token(person()))
    first = await say_until_taken(device, "Good morning, Violet")
    second = await say_until_taken(device, "Lovely weather today")

    later_text = f"One more thing {uuid.uuid4().hex[:6]}"
    await device.say(later_text, message_id="later")
    refusal = await device.until(lambda f: f["type"] == "error")
    assert refusal["code"] == "unavailable"
    assert "again" in refusal["text"]
    assert stored_texts(memoryless_stack, later_text) == 0

    await device.answers_to(first, second, timeout=30)  # the connection goes on
    await say_until_taken(device, later_text, "later")
    ack = next(f for f in device.seen if f["type"] == "ack" and f["id"] == "later")
    await device.answer_to("later", timeout=30)
    await device.say(later_text, message_id="later")  # a resend of one answered already
    again = await device.until(lambda f: f["type"] == "ack" and f["id"] == "later")
    assert again["seq"] == ack["seq"]

    marker = await device.say("Thanks, that's all")
    await device.answer_to(marker, timeout=30)
    answers = [f for f in device.seen if f["type"] == "message" and f.get("reply_to") == "later"]
    assert len(answers) == 1
    assert stored_texts(memoryless_stack, later_text) == 1
    assert_frames_leak_nothing(device.seen)
    await device.close()


async def test_a_new_persons_say_past_the_sessions_backlog_is_refused_unstored(
    memoryless_stack: Stack,
) -> None:
    waiting, _ = await Device.open(memoryless_stack.live_url, memoryless_stack.token(person()))
    first = await say_until_taken(waiting, "Hello, anyone there?")

    other, _ = await Device.open(memoryless_stack.live_url, memoryless_stack.token(person()))
    text = f"Me too {uuid.uuid4().hex[:6]}"
    await other.say(text, message_id="me-too")
    refusal = await other.until(lambda f: f["type"] == "error")
    assert refusal["code"] == "unavailable"
    assert stored_texts(memoryless_stack, text) == 0

    await waiting.answer_to(first, timeout=30)
    await say_until_taken(other, text, "me-too")
    await other.answer_to("me-too", timeout=30)
    assert stored_texts(memoryless_stack, text) == 1
    assert_frames_leak_nothing(other.seen)
    for device in (waiting, other):
        await device.close()


async def test_a_device_that_leaves_frees_its_unanswered_says(memoryless_stack: Stack) -> None:
    token = memoryless_stack.token(person())
    leaving, _ = await Device.open(memoryless_stack.live_url, token)
    for text in ("Hello there", "Are you there?"):
        await say_until_taken(leaving, text)
    await leaving.close()

    staying, _ = await Device.open(memoryless_stack.live_url, token)
    said = await staying.say("Hello from my laptop")
    ack = await staying.until(lambda f: f["type"] in ("ack", "error"))
    assert ack["type"] == "ack", ack
    await staying.answer_to(said, timeout=30)
    await staying.close()
