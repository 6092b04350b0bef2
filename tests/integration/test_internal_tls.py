"""Internal gRPC over TLS with client certificates (VIOLET_GRPC_TLS=on): the whole stack serves a
phone through it, and a caller in plain text, without a certificate, or with one of another
authority reaches nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.integration.test_phone_protocol import person
from tests.support.device import Device
from tests.support.stack import Stack, running_stack
from violet.identity import SERVICES
from violet.tls import Certificates, Transport, local_authority
from violet.v1 import session_pb2, session_pb2_grpc
from violet_cli.run import free_port

GRPC_SERVICES = SERVICES


@pytest.fixture(scope="module")
def tls_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    home = tmp_path_factory.mktemp("violet-tls")
    with running_stack(home, "sqlite", env={"VIOLET_GRPC_TLS": "on"}) as stack:
        yield stack


def health(channel: grpc.Channel) -> health_pb2.HealthCheckResponse:
    stub = health_pb2_grpc.HealthStub(channel)
    # The health package's stubs declare no client methods.
    answer: health_pb2.HealthCheckResponse = stub.Check(  # type: ignore[attr-defined]
        health_pb2.HealthCheckRequest(), timeout=5
    )
    return answer


def open_session(channel: grpc.Channel, stack: Stack) -> session_pb2.OpenReply:
    token = stack.internal_token(person())
    reply: session_pb2.OpenReply = session_pb2_grpc.SessionStub(channel).Open(
        session_pb2.OpenRequest(), metadata=(("authorization", f"Bearer {token}"),), timeout=10
    )
    return reply


async def test_a_phone_is_served_through_tls_between_every_service(tls_stack: Stack) -> None:
    device, _ = await Device.open(tls_stack.live_url, tls_stack.token(person()))
    answer = await device.ask("Please remember that my bike is blue")
    assert answer["from"] == "violet"
    # The fact went session to memory, and the page came gateway to memory, both over TLS.
    [item] = await device.memory_page(1)
    assert "bike is blue" in item["text"]
    await device.close()
    for name in GRPC_SERVICES:
        assert '"tls": true' in tls_stack.log(name) or "tls=True" in tls_stack.log(name), name


@pytest.mark.parametrize("service", GRPC_SERVICES)
def test_a_plain_text_caller_reaches_nothing(tls_stack: Stack, service: str) -> None:
    with (
        grpc.insecure_channel(tls_stack.address(service)) as channel,
        pytest.raises(grpc.RpcError) as refused,
    ):
        health(channel)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


def test_a_caller_without_a_client_certificate_is_refused(tls_stack: Stack) -> None:
    authority = (tls_stack.home / "tls" / "ca.crt").read_bytes()
    credentials = grpc.ssl_channel_credentials(root_certificates=authority)
    with (
        grpc.secure_channel(tls_stack.address("session"), credentials) as channel,
        pytest.raises(grpc.RpcError) as refused,
    ):
        open_session(channel, tls_stack)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


def test_a_certificate_of_another_authority_is_refused(tls_stack: Stack, tmp_path: Path) -> None:
    other = local_authority(tmp_path, ["session"]) / "session"
    stranger = Certificates.read(other)
    # It trusts the stack's authority, so only its own certificate can be what is refused.
    theirs = (tls_stack.home / "tls" / "ca.crt").read_bytes()
    credentials = Transport(
        Certificates(theirs, stranger.certificate, stranger.key)
    ).channel_credentials()
    assert credentials is not None
    with (
        grpc.secure_channel(tls_stack.address("session"), credentials) as channel,
        pytest.raises(grpc.RpcError) as refused,
    ):
        open_session(channel, tls_stack)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


def test_a_party_of_the_authority_is_served(tls_stack: Stack) -> None:
    with grpc.secure_channel(tls_stack.address("session"), tls_stack.credentials()) as channel:
        assert open_session(channel, tls_stack).conversation.startswith("c_")


def test_grpcurl_with_the_local_authority(tls_stack: Stack) -> None:
    """As docs/operations.md shows it: the operator's certificate, key and the authority."""
    token = tls_stack.internal_token(person())
    opened = tls_stack.grpcurl(
        "-H",
        f"authorization: Bearer {token}",
        "-d",
        "{}",
        tls_stack.address("session"),
        "violet.v1.Session/Open",
    )
    assert json.loads(opened)["conversation"].startswith("c_")


def test_the_operators_commands_speak_tls(tls_stack: Stack) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "violet_cli.main", "usage"],
        env=tls_stack.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "people" in json.loads(done.stdout.strip().splitlines()[-1])


def test_probes_get_health_alone_in_plain_text(tls_stack: Stack, tmp_path: Path) -> None:
    """The kubelet's gRPC probes cannot speak TLS: a replica with VIOLET_HEALTH_ADDR answers its
    health there in plain text, and nothing else."""
    probe = f"127.0.0.1:{free_port()}"
    own = {
        "VIOLET_HEALTH_ADDR": probe,
        "VIOLET_HOME": str(tmp_path),  # its own vector store, with the stack's certificates
        "VIOLET_TLS_DIR": str(tls_stack.home / "tls" / "router"),
    }
    name = tls_stack.start_replica("router", "probed", env=own)
    try:
        with grpc.insecure_channel(probe) as channel:
            assert health(channel).status == health_pb2.HealthCheckResponse.SERVING
            with pytest.raises(grpc.RpcError) as refused:
                open_session(channel, tls_stack)
            assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED
        with (
            grpc.insecure_channel(tls_stack.address(name)) as channel,
            pytest.raises(grpc.RpcError),
        ):
            health(channel)
    finally:
        tls_stack.stop(name)


def test_plain_text_beyond_loopback_needs_saying_so(tmp_path: Path) -> None:
    """Without TLS, a service told to listen beyond loopback refuses to start, in plain words."""
    stack = Stack(tmp_path, extra_env={"VIOLET_LISTEN_ADDR": f"0.0.0.0:{free_port()}"})
    started = subprocess.run(
        [sys.executable, "-m", "router"], env=stack.env, capture_output=True, text=True, timeout=60
    )
    assert started.returncode != 0
    assert "VIOLET_GRPC_TLS=on" in started.stderr and "beyond this machine" in started.stderr
