"""Which gRPC calls make spans: every call of Violet's services, none of the plumbing."""

from __future__ import annotations

from collections import namedtuple

import pytest

from violet.telemetry import _traced

Details = namedtuple("Details", "method")


@pytest.mark.parametrize(
    ("method", "traced"),
    [
        ("/violet.v1.Session/Say", True),
        (b"/violet.v1.Memory/Recall", True),  # grpc.aio's client details carry bytes
        ("/violet.v1.Health/Check", True),  # a service of ours that happens to say "Health"
        ("/grpc.health.v1.Health/Check", False),
        (b"/grpc.health.v1.Health/Watch", False),
        ("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", False),
        ("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", False),
    ],
)
def test_plumbing_makes_no_spans(method: str | bytes, traced: bool) -> None:
    assert _traced(Details(method)) is traced
