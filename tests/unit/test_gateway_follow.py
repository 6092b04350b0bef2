"""A device's stream from the session ends the moment the device goes, even while a frame to it
is still being sent: until it ends, the session counts the person as here, and sends no
notification for what Violet tells meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, cast

import grpc
import pytest
from starlette.websockets import WebSocket

from gateway.limits import PersonLimiter, SaysInFlight
from gateway.live import Device, LiveEndpoint
from tests.support.grpc_server import serving
from violet.channels import Peers
from violet.v1 import session_pb2, session_pb2_grpc

SECRET = "a-test-secret-that-is-long-enough-for-hs256"
WAIT_S = 5.0


class Session(session_pb2_grpc.SessionServicer):
    """Streams one message after another, and tells when the stream has ended."""

    def __init__(self) -> None:
        self.ended = asyncio.Event()

    async def Follow(
        self, request: session_pb2.FollowRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[session_pb2.ConversationEvent]:
        try:
            for seq in range(request.since + 1, request.since + 1000):
                message = session_pb2.ConversationMessage(seq=seq, author="violet", text="hi")
                yield session_pb2.ConversationEvent(message=message)
                await asyncio.sleep(0.01)
        finally:
            self.ended.set()


class StuckSocket:
    """A socket whose sends never finish, as with a page that closed mid-frame."""

    def __init__(self) -> None:
        self.sending = asyncio.Event()

    async def send_text(self, _: str) -> None:
        self.sending.set()
        await asyncio.Event().wait()


@pytest.fixture
async def followed() -> AsyncIterator[tuple[Session, LiveEndpoint]]:
    session = Session()
    async with serving(session_pb2_grpc.add_SessionServicer_to_server, session) as address:
        peers = Peers({"session": address}, 10.0)
        limits = (PersonLimiter.per_minute(30, 10), SaysInFlight(10))
        try:
            yield session, LiveEndpoint(peers, SECRET, limits, hello_timeout_s=5.0)
        finally:
            await peers.close()


async def test_the_stream_ends_when_the_device_goes_in_the_middle_of_a_send(
    followed: tuple[Session, LiveEndpoint],
) -> None:
    session, live = followed
    socket = StuckSocket()
    device = Device(cast(WebSocket, socket))
    follow: Any = live._follow  # the side of a connection that streams to the device
    following = asyncio.create_task(follow(device, "ada", 0, 0, asyncio.Event()))
    await asyncio.wait_for(socket.sending.wait(), WAIT_S)

    following.cancel()
    with pytest.raises(asyncio.CancelledError):
        await following
    # The cancelled task is still held here, as a connection's tasks are held until their
    # errors are read: the stream must not wait for it to be collected.
    await asyncio.wait_for(session.ended.wait(), WAIT_S)
    assert following.cancelled()
