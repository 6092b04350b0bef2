"""Internal services accept only internal tokens: a phone's device token calls nothing inside,
and the gateway turns the device's hello into internal calls for its person (CONTRACTS 3)."""

from __future__ import annotations

import json

import grpc
import pytest

from tests.integration.test_phone_protocol import person
from tests.support.device import Device
from tests.support.stack import Stack
from violet.identity import issue_internal_token
from violet.v1 import (
    memory_pb2,
    memory_pb2_grpc,
    router_pb2,
    router_pb2_grpc,
    session_pb2,
    session_pb2_grpc,
    worker_pb2,
    worker_pb2_grpc,
)

# One method of each service that would do harm in a phone's hands.
CALLS = {
    "session": lambda channel, md: session_pb2_grpc.SessionStub(channel).Deliver(
        session_pb2.WorkUpdate(topic="t_1", key="k", result=session_pb2.WorkResult(text="x")),
        metadata=md,
        timeout=10,
    ),
    "memory": lambda channel, md: memory_pb2_grpc.MemoryStub(channel).Capture(
        memory_pb2.CaptureRequest(person_message="my bank PIN is 1234"), metadata=md, timeout=10
    ),
    "router": lambda channel, md: router_pb2_grpc.RouterStub(channel).Route(
        router_pb2.RouteRequest(request="look up x"), metadata=md, timeout=10
    ),
    "worker": lambda channel, md: worker_pb2_grpc.WorkerStub(channel).StartWork(
        worker_pb2.StartWorkRequest(request="look up x"), metadata=md, timeout=10
    ),
}


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@pytest.mark.parametrize("service", sorted(CALLS))
def test_an_internal_service_refuses_a_device_token(stack: Stack, service: str) -> None:
    with (
        grpc.insecure_channel(stack.address(service)) as channel,
        pytest.raises(grpc.RpcError) as refused,
    ):
        CALLS[service](channel, bearer(stack.token(person())))
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_the_gateway_serves_a_device_through_internal_calls(stack: Stack) -> None:
    device, _ = await Device.open(stack.live_url, stack.token(person()))
    answer = await device.ask("Hello there")
    assert answer["from"] == "violet"
    await device.send({"type": "memory.list"})
    assert (await device.until(lambda f: f["type"] == "memory"))["items"] == []
    await device.close()


def test_an_operator_calls_a_service_with_grpcurl_and_an_internal_token(stack: Stack) -> None:
    token = stack.internal_token("operator-check")
    opened = stack.grpcurl(
        "-H",
        f"authorization: Bearer {token}",
        "-d",
        "{}",
        stack.address("session"),
        "violet.v1.Session/Open",
    )
    assert json.loads(opened)["conversation"].startswith("c_")


@pytest.mark.parametrize("service", sorted(CALLS))
def test_a_token_addressed_to_another_service_opens_nothing_here(
    stack: Stack, service: str
) -> None:
    """A token one service was sent (addressed to it alone) is refused by every other, before
    the method runs; the operator's token, addressed to all, is not refused for that reason."""
    others = tuple(name for name in CALLS if name != service)
    seen_elsewhere = issue_internal_token(person(), stack.secret, services=others)
    unaddressed = issue_internal_token(person(), stack.secret, services=())
    for token in (seen_elsewhere, unaddressed):
        with (
            grpc.insecure_channel(stack.address(service)) as channel,
            pytest.raises(grpc.RpcError) as refused,
        ):
            CALLS[service](channel, bearer(token))
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert f"not for the {service} service" in (refused.value.details() or "")
