"""A browser's notifications, as its `push.get`, `push.on` and `push.off` frames ask: passed to
the session service, which keeps them with the person's data and sends them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import grpc

from gateway import frames, phrases
from gateway.frames import FrameError, PushRequest
from gateway.limits import PersonLimiter
from violet.channels import Peers
from violet.v1 import notifications_pb2, notifications_pb2_grpc

# Turning notifications on and off, per person: enough for a person changing their mind, and a
# bound on the addresses a broken or hostile page can make the server keep.
CHANGES_PER_MINUTE = 10
CHANGES_BURST = 5

Metadata = tuple[tuple[str, str], ...]


class PushFrames:
    def __init__(self, peers: Peers) -> None:
        self._peers = peers
        self._changes = PersonLimiter.per_minute(CHANGES_PER_MINUTE, CHANGES_BURST)

    async def answer(
        self, person: str, request: PushRequest, metadata: Metadata, signed_in: str
    ) -> str:
        """The `push` frame for the device after its request; FrameError when it was refused.
        `signed_in`: the asking device (a digest of its token), whose sign-out removes what it
        turns on."""
        if request.action != "get" and not self._changes.allow(person):
            raise FrameError("rate_limited", phrases.TOO_MANY)
        stub = self._peers.stub("session", notifications_pb2_grpc.NotificationsStub)
        device = notifications_pb2.PushDevice(device=request.device)
        calls: dict[str, Callable[[], Awaitable[notifications_pb2.PushState]]] = {
            "get": lambda: stub.State(device, metadata=metadata),
            "on": lambda: stub.TurnOn(subscription(request, signed_in), metadata=metadata),
            "off": lambda: stub.TurnOff(device, metadata=metadata),
        }
        try:
            state = await calls[request.action]()
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.INVALID_ARGUMENT:
                raise FrameError("bad_frame", phrases.NO_NOTIFICATIONS_HERE) from None
            if error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                raise FrameError("rate_limited", phrases.TOO_MANY) from None
            raise FrameError("unavailable", phrases.NOTIFICATIONS_AWAY) from None
        return frames.outgoing("push", key=state.key, on=state.on, previews=state.previews)


def subscription(request: PushRequest, signed_in: str) -> notifications_pb2.PushSubscription:
    return notifications_pb2.PushSubscription(
        signed_in_device=signed_in,
        device=request.device,
        kind="webpush",
        endpoint=request.endpoint,
        p256dh=request.p256dh,
        auth=request.auth,
        previews=request.previews,
    )
