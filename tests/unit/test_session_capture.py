"""A turn's capture carries who pays for the person's calls, as the session last read it (the key
still sealed), so that memory's calls for the turn need not ask the session. Memory is a gRPC
stand-in on loopback that keeps what it was sent."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import grpc
import pytest

from session.capture.owed import Capture
from session.memory_client import MemoryClient
from tests.support.grpc_server import serving
from violet.channels import Peers
from violet.clock import utc_now
from violet.identity import service_identity
from violet.keyring import ApiKey, Sealed, resolve_keyring
from violet.models.credentials import Credential, Hold, Payer
from violet.v1 import memory_pb2, memory_pb2_grpc

SECRET = "a secret only this test knows"
KEY = ApiKey("sk-ant-api03-ana-aaaaaaaaaaaaaaaaaaaa-AAAA")

Known = dict[str, tuple[Credential, float]]
# Sends one capture for a person, with what the session knows of who pays; what memory received.
Send = Callable[[Known, str], Awaitable[memory_pb2.CaptureRequest]]


class Memory(memory_pb2_grpc.MemoryServicer):
    def __init__(self) -> None:
        self.captured: list[memory_pb2.CaptureRequest] = []

    async def Capture(  # type: ignore[override]
        self, request: memory_pb2.CaptureRequest, context: grpc.aio.ServicerContext
    ) -> memory_pb2.CaptureReply:
        self.captured.append(request)
        return memory_pb2.CaptureReply()


@pytest.fixture
async def capture() -> AsyncIterator[Send]:
    memory = Memory()
    async with serving(memory_pb2_grpc.add_MemoryServicer_to_server, memory) as address:
        peers = Peers({"memory": address}, 5.0)

        async def send(known: Known, person: str) -> memory_pb2.CaptureRequest:
            client = MemoryClient(peers, 1.0, 2.0, known.get)
            identity = service_identity(person, SECRET)
            said = Capture("My cat is Miso.", "A fine name.", (1, 2), utc_now())
            await client.capture(identity, said, utc_now())
            return memory.captured[-1]

        try:
            yield send
        finally:
            await peers.close()


async def test_the_capture_carries_the_sealed_key_and_its_age(
    capture: Send, tmp_path: Path
) -> None:
    sealed = resolve_keyring("", tmp_path).seal(KEY, "ana")
    own = Credential(Payer.OWN, key=KEY, pseudonym="p-ana", sealed=sealed)
    sent = await capture({"ana": (own, 12.0004)}, "ana")
    assert sent.HasField("credential")
    assert (sent.credential.payer, sent.credential.hold) == ("own", "")
    assert sent.credential.pseudonym == "p-ana"
    assert (
        Sealed(
            sent.credential.key.kek_id, sent.credential.key.nonce, sent.credential.key.ciphertext
        )
        == sealed
    )
    assert sent.credential_age_ms == 12001  # never younger than it is
    assert KEY.reveal().encode() not in sent.SerializeToString()


async def test_a_hold_goes_along_and_no_key_is_sent_for_the_operator(capture: Send) -> None:
    held = Credential(Payer.OPERATOR, Hold.BUDGET_DAY, pseudonym="p-bo")
    sent = await capture({"bo": (held, 0.0)}, "bo")
    assert (sent.credential.payer, sent.credential.hold) == ("operator", "budget_day")
    assert not sent.credential.HasField("key")


async def test_nothing_is_sent_when_the_session_knows_none_or_only_an_opened_key(
    capture: Send,
) -> None:
    assert not (await capture({}, "cy")).HasField("credential")
    opened_only = Credential(Payer.OWN, key=KEY)  # never sent opened
    sent = await capture({"cy": (opened_only, 1.0)}, "cy")
    assert not sent.HasField("credential")
    assert KEY.reveal().encode() not in sent.SerializeToString()
