"""Every gRPC service answers health checks and lists its violet.v1 service by reflection."""

from __future__ import annotations

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from tests.support.stack import Stack

EXPECTED = {
    "session": {"violet.v1.Session", "violet.v1.YourData", "violet.v1.Operator"},
    "router": {"violet.v1.Router", "violet.v1.PersonData"},
    "memory": {"violet.v1.Memory", "violet.v1.PersonData"},
    "worker": {"violet.v1.Worker", "violet.v1.Documents", "violet.v1.PersonData"},
}


@pytest.mark.parametrize("service", sorted(EXPECTED))
def test_reflection_lists_the_violet_service(stack: Stack, service: str) -> None:
    with grpc.insecure_channel(stack.address(service)) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        answer = next(iter(stub.ServerReflectionInfo(iter([request]), timeout=5)))
    names = {service.name for service in answer.list_services_response.service}
    assert EXPECTED[service] | {"grpc.health.v1.Health"} <= names


def test_grpcurl_lists_the_session_service(stack: Stack) -> None:
    assert "violet.v1.Session" in stack.grpcurl(stack.address("session"), "list").split()
