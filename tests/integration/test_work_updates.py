"""Background work reports through Session.Deliver: activity lines and results reach every
device, told in Violet's voice when the session is free, once per update."""

from __future__ import annotations

import uuid

import grpc
import pytest

from tests.support.device import Device
from tests.support.stack import Stack
from violet.identity import service_identity
from violet.v1 import session_pb2, session_pb2_grpc


async def deliver(stack: Stack, person: str, update: session_pb2.WorkUpdate) -> None:
    # As the worker's channel to the session addresses it.
    metadata = service_identity(person, stack.secret, "session").metadata()
    async with grpc.aio.insecure_channel(stack.address("session")) as channel:
        await session_pb2_grpc.SessionStub(channel).Deliver(update, metadata=metadata, timeout=10)


async def test_activity_lines_reach_every_device_and_a_result_is_told_once(stack: Stack) -> None:
    person = "updates-" + uuid.uuid4().hex[:6]
    phone, _ = await Device.open(stack.live_url, stack.token(person))
    laptop, _ = await Device.open(stack.live_url, stack.token(person))
    await phone.ask("Hello there")

    await deliver(stack, person, session_pb2.WorkUpdate(topic="t1", activity="Reading the page"))
    for device in (phone, laptop):
        line = await device.until(lambda f: f["type"] == "activity")
        assert line == {"type": "activity", "text": "Reading the page"}

    result = session_pb2.WorkUpdate(
        topic="t1", key="t1-done", result=session_pb2.WorkResult(text="The page is called Tides.")
    )
    await deliver(stack, person, result)
    await deliver(stack, person, result)  # redelivered: told once
    for device in (phone, laptop):
        cleared = await device.until(lambda f: f["type"] == "activity")
        assert cleared["text"] == ""
        told = await device.until(lambda f: f["type"] == "message" and f["from"] == "violet")
        assert "reply_to" not in told and "Tides" in told["text"]

    await phone.ask("Thanks!")
    told_again = [f for f in phone.seen if f["type"] == "message" and "Tides" in f["text"]]
    assert len(told_again) == 1


async def test_an_approval_becomes_violets_own_question(stack: Stack) -> None:
    person = "approval-" + uuid.uuid4().hex[:6]
    device, _ = await Device.open(stack.live_url, stack.token(person))
    question = 'Shall I send an email to a@example.org saying "hi"?'
    await deliver(
        stack,
        person,
        session_pb2.WorkUpdate(
            topic="t2",
            key="t2-ask",
            approval=session_pb2.ApprovalRequest(approval="held-1", question=question),
        ),
    )
    asked = await device.until(lambda f: f["type"] == "message" and f["from"] == "violet")
    assert "a@example.org" in asked["text"] and asked["text"].endswith("?")


async def test_an_update_without_key_is_refused(stack: Stack) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await deliver(
            stack,
            "someone",
            session_pb2.WorkUpdate(topic="t3", result=session_pb2.WorkResult(text="x")),
        )
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
