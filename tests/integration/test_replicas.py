"""Two gateways and two session replicas on one PostgreSQL database share the people, as two pods
of each would behind their Services: every say is answered exactly once, every device shows the
same history whichever gateway it uses, and a session replica that stops loses nothing."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.device import Device
from tests.support.stack import Stack, running_stack
from tests.support.waiting import eventually

PEOPLE = 6
SAYS_EACH = 4


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stack, str]]:
    """The stack, with a second session replica and a second gateway that talks to it; yields
    the stack and the second gateway's phone address. The last test stops the second session."""
    with running_stack(tmp_path_factory.mktemp("replicas"), "postgres") as stack:
        session_b = stack.start_replica("session", "b")
        gateway_b = stack.start_replica(
            "gateway", "b", env={"VIOLET_SESSION_ADDR": stack.address(session_b)}
        )
        yield stack, f"ws://{stack.address(gateway_b)}/v1/live"


def _messages(device: Device) -> list[dict[str, Any]]:
    return [frame for frame in device.seen if frame["type"] == "message"]


async def _history(url: str, token: str, count: int) -> list[dict[str, Any]]:
    """The first `count` messages of the conversation, as a new device is given them."""
    reader, _ = await Device.open(url, token)
    try:
        return [await reader.next() for _ in range(count)]
    finally:
        await reader.close()


async def _converse(stack: Stack, url_b: str, person: str) -> list[str]:
    """One person with a phone on each gateway, saying alternately from each; the ids said."""
    token = stack.token(person)
    phone, welcome_a = await Device.open(stack.live_url, token)
    laptop, welcome_b = await Device.open(url_b, token)
    assert welcome_a["conversation"] == welcome_b["conversation"]
    said = []
    for number in range(SAYS_EACH):
        device = (phone, laptop)[number % 2]
        said.append(await device.say(f"Tell me something nice, number {number}."))
        await device.answer_to(said[-1], timeout=60)
    await phone.answers_to(*said, timeout=60)
    await laptop.answers_to(*said, timeout=60)
    assert [f["seq"] for f in _messages(phone)] == [f["seq"] for f in _messages(laptop)]
    await phone.close()
    await laptop.close()
    return said


async def test_two_gateways_and_two_sessions_share_the_people_and_answer_each_say_once(
    replicas: tuple[Stack, str],
) -> None:
    stack, url_b = replicas
    people = [f"shared-{n}-{uuid.uuid4().hex[:6]}" for n in range(PEOPLE)]
    said = await asyncio.gather(*(_converse(stack, url_b, person) for person in people))

    for person, ids in zip(people, said, strict=True):
        history = await _history(stack.live_url, stack.token(person), 2 * SAYS_EACH)
        answers = Counter(f.get("reply_to") for f in history if f["from"] == "violet")
        assert answers == Counter(ids), f"{person}: {answers}"
        assert [f["seq"] for f in history] == sorted(f["seq"] for f in history)

    rows = stack.rows("session", "SELECT replica FROM model_conversations")
    serving = {row.replica for row in rows}
    assert "b" in serving and len(serving) == 2, serving


async def test_says_stored_on_a_replica_that_stops_are_answered_by_the_other(
    replicas: tuple[Stack, str],
) -> None:
    stack, url_b = replicas
    token = stack.token("mover-" + uuid.uuid4().hex[:6])
    phone, _ = await Device.open(stack.live_url, token)
    laptop, _ = await Device.open(url_b, token)
    said = []
    for number in range(3):
        said.append(await laptop.say(f"Just so you know, number {number}."))
        await laptop.until(lambda f, i=said[-1]: f["type"] == "ack" and f["id"] == i)

    stack.stop("session-b")

    await phone.answers_to(*said, timeout=60)
    answers = Counter(f.get("reply_to") for f in _messages(phone) if f["from"] == "violet")
    assert answers == Counter(said)
    # The turns' captures too, on whichever replica holds them.
    await eventually(lambda: not stack.unfinished(), "nothing left to answer or capture")
    await phone.close()
    await laptop.close()
