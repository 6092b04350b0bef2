"""Property, over a real websocket on SQLite and PostgreSQL: whatever a device sends, every
frame is answered (an ack, the memory page, the documents or a contract error, never
`unavailable` for what a frame holds), the connection keeps answering, and the person's
conversation stays whole for every device (CONTRACTS section 4)."""

from __future__ import annotations

import json
import uuid

import grpc
import pytest
import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.test_phone_protocol import assert_frames_leak_nothing
from tests.support.device import Device
from tests.support.frames import hostile_frames, valid_says
from tests.support.stack import Stack
from violet.v1 import session_pb2, session_pb2_grpc

EXAMPLES = 60
ANSWER_TIMEOUT_S = 20.0
REFUSALS = {"bad_frame", "too_long"}
# Says per example stay under the burst, so no example meets the rate limit.
frame_lists = st.lists(st.one_of(hostile_frames(), valid_says.map(json.dumps)), max_size=6)
OFFLINE = pytest.mark.parametrize("stack", ["sqlite-offline", "postgres-offline"], indirect=True)


async def answer_of(device: Device) -> dict:
    """The reply to the one frame just sent; messages and activity of the turn may come first."""
    answers = ("ack", "error", "memory", "documents", "document")
    return await device.until(lambda f: f["type"] in answers, ANSWER_TIMEOUT_S)


@OFFLINE
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(before_hello=st.lists(hostile_frames(), max_size=2), sent=frame_lists)
async def test_no_frame_leaves_a_device_unanswered_or_a_conversation_poisoned(
    stack: Stack, before_hello: list[str | bytes], sent: list[str | bytes]
) -> None:
    token = stack.token("hostile-" + uuid.uuid4().hex[:10])
    device = await Device.connect(stack.live_url)
    for raw in before_hello:  # before hello, anything but a hello is refused or closes
        await device.send(raw)
        refused = await device.next(ANSWER_TIMEOUT_S)
        assert refused["type"] == "error" and refused["code"] in {"bad_frame", "unauthorized"}
        if refused["code"] == "unauthorized":
            with pytest.raises(websockets.ConnectionClosed):
                await device.next(ANSWER_TIMEOUT_S)
            device = await Device.connect(stack.live_url)
    await device.send({"type": "hello", "token": token, "since": 0})
    assert (await device.next(ANSWER_TIMEOUT_S))["type"] == "welcome"

    for raw in sent:
        await device.send(raw)
        answer = await answer_of(device)
        if answer["type"] == "error":
            assert answer["code"] in REFUSALS, answer
    last = await device.say("Are you still there?")
    await device.answer_to(last, ANSWER_TIMEOUT_S)
    assert_frames_leak_nothing(device.seen)
    await device.close()

    acked = {(f["id"], f["seq"]) for f in device.seen if f["type"] == "ack"}
    await assert_whole_for_a_new_device(stack, token, acked)


async def assert_whole_for_a_new_device(
    stack: Stack, token: str, acked: set[tuple[str, int]]
) -> None:
    """A new device is shown every message in order, and every stored say answered once."""
    device, welcome = await Device.open(stack.live_url, token)
    history = [await device.next(ANSWER_TIMEOUT_S) for _ in range(welcome["seq"])]
    assert [f["seq"] for f in history] == list(range(1, welcome["seq"] + 1))
    says = [f for f in history if f["from"] == "you"]
    answers = [f["reply_to"] for f in history if "reply_to" in f]
    assert len(says) == len(acked) == len(answers)
    assert sorted(answers) == sorted(message_id for message_id, _ in acked)
    await device.close()


@OFFLINE
async def test_a_hello_far_ahead_is_served_from_the_newest_message(stack: Stack) -> None:
    token = stack.token("ahead-" + uuid.uuid4().hex[:10])
    device, welcome = await Device.open(stack.live_url, token)
    await device.ask("Something to remember this by")
    await device.close()

    ahead, welcome = await Device.open(stack.live_url, token, since=10**30)
    assert welcome["seq"] == 2
    answer = await ahead.ask("Still here?")
    assert answer["seq"] == 4
    assert [f["seq"] for f in ahead.seen if f["type"] == "message"] == [3, 4]
    await ahead.close()


@OFFLINE
async def test_a_say_stored_with_an_odd_id_stops_no_device(stack: Stack) -> None:
    someone = "odd-" + uuid.uuid4().hex[:10]
    with grpc.insecure_channel(stack.address("session")) as channel:
        session_pb2_grpc.SessionStub(channel).Say(
            session_pb2.SayRequest(client_id="not what the gateway writes {", text="Hello"),
            metadata=(("authorization", f"Bearer {stack.internal_token(someone)}"),),
            timeout=10,
        )
    device, _ = await Device.open(stack.live_url, stack.token(someone))
    answer = await device.answer_to("not what the gateway writes {")
    assert answer["seq"] == 2
    assert (await device.ask("And now?"))["seq"] == 4
    await device.close()
