"""One conversation that never starts over: window, fold, pins, replicas (ARCHITECTURE "A turn").

Each test runs its own stack, since each needs its own window or model script.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.device import Device
from tests.support.messages_api import opens_turn, structured_name
from tests.support.stack import Stack, running_stack
from tests.support.waiting import eventually
from violet.models.cache import system_text
from violet.models.tools import UPDATE_PREFIX, is_memory_note

FAST_SAYS = {"VIOLET_SAYS_PER_MINUTE": "100000", "VIOLET_SAY_BURST": "1000"}


def rows(stack: Stack, query: str, **params: object) -> list:
    return stack.rows("session", query, **params)


def model_conversations(stack: Stack, conversation: str) -> list:
    return rows(
        stack,
        "SELECT id, reason, carry_from_seq FROM model_conversations "
        "WHERE conversation_id = :c ORDER BY started_at",
        c=conversation,
    )


def main_calls(stack: Stack) -> list[dict]:
    assert stack.model_api is not None
    bodies = [r["body"] for r in stack.model_api.requests()]
    return [b for b in bodies if any(t["name"] == "record_promise" for t in b.get("tools", []))]


def live_messages_in(body: dict) -> int:
    """Transcript messages a main call holds: one text block each; not the notes after them
    (an update being told, the memory note), nor a turn's own tool exchange."""
    return sum(
        1
        for message in body["messages"]
        for block in message["content"]
        if block["type"] == "text"
        and not is_memory_note(block)
        and not block["text"].startswith(UPDATE_PREFIX)
    )


@pytest.fixture(params=["sqlite", "postgres"])
def offline_stack(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stack]:
    with running_stack(tmp_path, request.param, env=FAST_SAYS) as stack:
        yield stack


@pytest.fixture
def scripted_stack(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stack]:
    window = getattr(request, "param", "20")
    with running_stack(
        tmp_path, "sqlite", "anthropic", env={**FAST_SAYS, "VIOLET_WINDOW": window}
    ) as stack:
        yield stack


async def test_a_long_conversation_rolls_over_and_every_device_still_sees_all_of_it(
    offline_stack: Stack,
) -> None:
    token = offline_stack.token("long-" + uuid.uuid4().hex[:6])
    phone, welcome = await Device.open(offline_stack.live_url, token)
    for number in range(34):
        await phone.ask(f"Here is thought number {number} about the garden and the roses.")

    laptop, reopened = await Device.open(offline_stack.live_url, token)
    history = [await laptop.next() for _ in range(68)]
    assert reopened["conversation"] == welcome["conversation"]
    assert [frame["seq"] for frame in history] == list(range(1, 69))
    assert history[0]["text"].startswith("Here is thought number 0")

    behind = model_conversations(offline_stack, welcome["conversation"])
    assert len(behind) >= 3 and behind[0].reason == "first message"
    assert {row.reason for row in behind[1:]} == {"rollover"}
    summary = rows(
        offline_stack, "SELECT summary FROM conversations WHERE id = :c", c=welcome["conversation"]
    )[0].summary
    assert 0 < len(summary) <= 1000

    # The newest model conversation holds only the carried messages and what came after.
    newest = behind[-1]
    carried = rows(
        offline_stack,
        "SELECT seq, author FROM messages WHERE conversation_id = :c AND seq >= :s "
        "AND (model_conversation_id IS NULL OR model_conversation_id != :m) ORDER BY seq",
        c=welcome["conversation"],
        s=newest.carry_from_seq,
        m=newest.id,
    )
    assert 1 <= len(carried) <= 15 and carried[0].author == "you"


@pytest.mark.parametrize("scripted_stack", ["20"], indirect=True)
async def test_with_a_20_window_pins_ride_every_call_and_no_call_holds_more_than_20(
    scripted_stack: Stack,
) -> None:
    assert scripted_stack.model_api is not None
    scripted_stack.model_api.push(
        {"tool_use": {"name": "record_promise", "input": {"text": "send the photos on Friday"}}}
    )
    device, _ = await Device.open(scripted_stack.live_url, scripted_stack.token("pins"))
    for number in range(24):
        await device.ask(f"Message {number}: tell me something nice about autumn.")

    calls = main_calls(scripted_stack)
    turn_openers = [body for body in calls if opens_turn(body)]
    assert len(turn_openers) == 24
    for body in turn_openers[1:]:  # the first turn is the one that made the promise
        assert "send the photos on Friday" in system_text(body["system"])
    assert max(live_messages_in(body) for body in calls) <= 20
    # Every main call marks its stable parts for the prompt cache; once the prompt is long
    # enough to be cached, most of it is read from the call before.
    assert all(breakpoints(body) for body in calls)
    later = main_usage(scripted_stack)[10:]
    read = sum(usage["cache_read_input_tokens"] for usage in later)
    assert read > 0.5 * sum(prompt_tokens(usage) for usage in later)


def breakpoints(body: dict) -> int:
    blocks = [*body["system"], *(b for m in body["messages"] for b in m["content"])]
    return sum(1 for block in blocks if "cache_control" in block)


def prompt_tokens(usage: dict) -> int:
    return (
        usage["input_tokens"]
        + usage["cache_creation_input_tokens"]
        + usage["cache_read_input_tokens"]
    )


def main_usage(stack: Stack) -> list[dict]:
    assert stack.model_api is not None
    return [
        r["usage"]
        for r in stack.model_api.requests()
        if any(t["name"] == "record_promise" for t in r["body"].get("tools", []))
    ]


@pytest.mark.expects_fallbacks
@pytest.mark.parametrize("scripted_stack", ["20"], indirect=True)
async def test_a_failed_fold_is_retried_after_the_next_turn_and_forced_at_twice_the_window(
    scripted_stack: Stack,
) -> None:
    api = scripted_stack.model_api
    assert api is not None
    api.fail_tool("fold")
    device, welcome = await Device.open(scripted_stack.live_url, scripted_stack.token("folds"))
    for number in range(20):  # 40 messages: twice the window
        await device.ask(f"Line {number} of a long story about a cat.")

    def rolled_over() -> bool:  # forced after the last answer was delivered
        return len(model_conversations(scripted_stack, welcome["conversation"])) == 2

    await eventually(rolled_over, "the rollover forced at twice the window")
    fold_calls = [r for r in api.requests() if structured_name(r["body"]) == "fold"]
    assert len(fold_calls) == 20 - 9  # due from the 10th turn (20 live), then every turn
    behind = model_conversations(scripted_stack, welcome["conversation"])
    assert [row.reason for row in behind] == ["first message", "rollover"]
    summary = rows(
        scripted_stack, "SELECT summary FROM conversations WHERE id = :c", c=welcome["conversation"]
    )[0].summary
    assert summary == ""  # the forced rollover keeps the previous (empty) summary

    api.heal_tool("fold")
    for number in range(5):  # the 10 carried messages grow back to the window
        await device.ask(f"After the hiccup, line {number}.")

    def folded() -> bool:  # the fold runs after the answer is delivered
        state = rows(
            scripted_stack,
            "SELECT summary, fold_failures FROM conversations WHERE id = :c",
            c=welcome["conversation"],
        )[0]
        return bool(state.summary) and state.fold_failures == 0

    await eventually(folded, "a fold after the model healed")
    reasons = [row.reason for row in model_conversations(scripted_stack, welcome["conversation"])]
    assert reasons == ["first message", "rollover", "rollover"]


@pytest.mark.parametrize("scripted_stack", ["30"], indirect=True)
async def test_another_replica_serves_the_next_message_with_the_context_rebuilt(
    scripted_stack: Stack,
) -> None:
    assert scripted_stack.model_api is not None
    token = scripted_stack.token("mover")
    device, welcome = await Device.open(scripted_stack.live_url, token)
    await device.ask("My favourite colour is teal, just so you know.")
    await device.close()

    scripted_stack.stop("session")
    scripted_stack.start("session", env={"VIOLET_REPLICA": "replica-b"})

    again, after = await Device.open(scripted_stack.live_url, token)
    history = [await again.next() for _ in range(2)]
    assert after["conversation"] == welcome["conversation"]
    assert history[0]["text"] == "My favourite colour is teal, just so you know."
    await again.ask("What did I just tell you?")

    assert "favourite colour is teal" in str(main_calls(scripted_stack)[-1]["messages"])
    reasons = [row.reason for row in model_conversations(scripted_stack, welcome["conversation"])]
    assert reasons == ["first message", "moved server"]


async def test_two_messages_at_once_from_two_devices_are_answered_once_each_in_order(
    offline_stack: Stack,
) -> None:
    token = offline_stack.token("twins-" + uuid.uuid4().hex[:6])
    phone, _ = await Device.open(offline_stack.live_url, token)
    laptop, _ = await Device.open(offline_stack.live_url, token)
    ids = await asyncio.gather(phone.say("From the phone"), laptop.say("From the laptop"))
    await phone.answers_to(*ids)

    reader, _ = await Device.open(offline_stack.live_url, token)
    history = [await reader.next() for _ in range(4)]
    asked = [f for f in history if f["from"] == "you"]
    answers = [f for f in history if f["from"] == "violet"]
    assert sorted(f.get("reply_to") for f in answers) == sorted(ids)
    # Answered in the order the messages were stored.
    first = next(f for f in asked if f["seq"] == min(a["seq"] for a in asked))
    order = {"From the phone": ids[0], "From the laptop": ids[1]}
    assert answers[0]["reply_to"] == order[first["text"]]
