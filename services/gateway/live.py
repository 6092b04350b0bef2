"""One device's websocket: hello, history replay, says and acks, and everything that follows.

Each device follows the conversation through its own stream from the session service, so every
connected device of the person receives every message and activity line, on any replica.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from datetime import UTC

import grpc
from opentelemetry import trace
from starlette.websockets import WebSocket, WebSocketDisconnect

from gateway import frames
from gateway.frames import FrameError, Hello, MemoryRequest, Say
from gateway.limits import SayLimiter
from violet.channels import Peers
from violet.identity import Identity, Unauthorized, verify_token
from violet.v1 import memory_pb2, memory_pb2_grpc, session_pb2, session_pb2_grpc

log = logging.getLogger(__name__)
tracer = trace.get_tracer(__name__)

CLOSE_UNAUTHORIZED = 4401
CLOSE_UNAVAILABLE = 1013
FOLLOW_RETRY_MAX_S = 5.0

UNAVAILABLE_TEXT = "Violet can't take messages right now. Please try again in a moment."


class Device:
    """One connected socket; sends are serialised so frames never interleave."""

    def __init__(self, websocket: WebSocket) -> None:
        self.websocket = websocket
        self._sending = asyncio.Lock()

    async def send(self, frame: str) -> None:
        async with self._sending:
            await self.websocket.send_text(frame)

    async def refuse(self, code: str, text: str, close_code: int) -> None:
        with contextlib.suppress(Exception):
            await self.send(frames.error(code, text))
            await self.websocket.close(close_code)


def message_frame(message: session_pb2.ConversationMessage) -> str:
    fields = {
        "seq": message.seq,
        "from": message.author,
        "text": message.text,
        "at": message.at.ToDatetime(tzinfo=UTC).isoformat().replace("+00:00", "Z"),
    }
    if message.reply_to:
        fields["reply_to"] = json.loads(message.reply_to)
    return frames.outgoing("message", **fields)


async def receive_raw(websocket: WebSocket) -> str | bytes:
    """The next frame as sent, text or binary; raises WebSocketDisconnect when the device goes."""
    message = await websocket.receive()
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(message.get("code", 1000))
    if message.get("text") is not None:
        return message["text"]
    return message.get("bytes") or b""


class LiveEndpoint:
    def __init__(
        self, peers: Peers, secret: str, limiter: SayLimiter, hello_timeout_s: float
    ) -> None:
        self._peers = peers
        self._secret = secret
        self._limiter = limiter
        self._hello_timeout_s = hello_timeout_s

    # Stubs are made on first use: gRPC channels belong to the event loop that serves.
    @property
    def _session(self) -> session_pb2_grpc.SessionStub:
        return self._peers.stub("session", session_pb2_grpc.SessionStub)

    @property
    def _memory(self) -> memory_pb2_grpc.MemoryStub:
        return self._peers.stub("memory", memory_pb2_grpc.MemoryStub)

    async def serve(self, websocket: WebSocket) -> None:
        await websocket.accept()
        device = Device(websocket)
        greeted = await self._greet(device)
        if greeted is None:
            return
        identity, since = greeted
        try:
            opened = await self._session.Open(
                session_pb2.OpenRequest(), metadata=identity.metadata()
            )
        except grpc.aio.AioRpcError:
            await device.refuse("unavailable", UNAVAILABLE_TEXT, CLOSE_UNAVAILABLE)
            return
        await device.send(
            frames.outgoing("welcome", conversation=opened.conversation, seq=opened.seq)
        )
        replayed = asyncio.Event()
        follower = asyncio.create_task(self._follow(device, identity, since, opened.seq, replayed))
        try:
            await replayed.wait()  # history first, before anything else
            await self._converse(device, identity)
        except WebSocketDisconnect:
            pass
        finally:
            follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await follower

    async def _greet(self, device: Device) -> tuple[Identity, int] | None:
        try:
            raw = await asyncio.wait_for(receive_raw(device.websocket), self._hello_timeout_s)
            hello = frames.parse(raw)
            if not isinstance(hello, Hello):
                raise FrameError("unauthorized", "Start with hello and your token.")
            identity = verify_token(hello.token, self._secret)
        except TimeoutError:
            await device.refuse(
                "unauthorized", "Say hello with your token first.", CLOSE_UNAUTHORIZED
            )
            return None
        except FrameError as error:
            close = CLOSE_UNAUTHORIZED if error.code == "unauthorized" else 1008
            await device.refuse(error.code, error.text, close)
            return None
        except Unauthorized:
            await device.refuse(
                "unauthorized",
                "That sign-in has expired or is not valid. Please sign in again.",
                CLOSE_UNAUTHORIZED,
            )
            return None
        except WebSocketDisconnect:
            return None
        return identity, hello.since

    async def _follow(
        self,
        device: Device,
        identity: Identity,
        since: int,
        target: int,
        replayed: asyncio.Event,
    ) -> None:
        """Streams the conversation to the device; reconnects when a session replica goes."""
        last, delay = since, 0.1
        if last >= target:
            replayed.set()
        while True:
            try:
                stream = self._session.Follow(
                    session_pb2.FollowRequest(since=last),
                    metadata=identity.metadata(),
                    wait_for_ready=True,
                )
                async for event in stream:
                    if event.HasField("message"):
                        await device.send(message_frame(event.message))
                        last = event.message.seq
                        if last >= target:
                            replayed.set()
                    else:
                        await device.send(frames.outgoing("activity", text=event.activity.text))
                    delay = 0.1
            except grpc.aio.AioRpcError as error:
                log.info(
                    "conversation stream ended; reconnecting", extra={"code": error.code().name}
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, FOLLOW_RETRY_MAX_S)

    async def _converse(self, device: Device, identity: Identity) -> None:
        while True:
            raw = await receive_raw(device.websocket)
            try:
                frame = frames.parse(raw)
                await self._handle(device, identity, frame)
            except FrameError as error:
                await device.send(frames.error(error.code, error.text))

    async def _handle(self, device: Device, identity: Identity, frame: frames.Incoming) -> None:
        if isinstance(frame, Hello):
            raise FrameError("bad_frame", "You have already said hello.")
        if isinstance(frame, Say):
            await self._say(device, identity, frame)
        elif isinstance(frame, MemoryRequest):
            await self._memory_page(device, identity, frame)

    async def _say(self, device: Device, identity: Identity, say: Say) -> None:
        if not self._limiter.allow(identity.person):
            raise FrameError(
                "rate_limited",
                "That's a lot of messages at once. Please wait a few seconds and send it again.",
            )
        # A say starts the turn's trace: every service's spans for it share this trace id.
        with tracer.start_as_current_span("say", kind=trace.SpanKind.SERVER) as span:
            span.set_attribute("violet.say.chars", len(say.text))
            reply = await self._store(identity, say)
        await device.send(frames.outgoing("ack", id=say.id, seq=reply.seq))

    async def _store(self, identity: Identity, say: Say) -> session_pb2.SayReply:
        try:
            return await self._session.Say(
                session_pb2.SayRequest(client_id=json.dumps(say.id), text=say.text),
                metadata=identity.metadata(),
            )
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.INVALID_ARGUMENT:
                raise FrameError("bad_frame", "Violet couldn't take that message.") from None
            raise FrameError("unavailable", UNAVAILABLE_TEXT) from None

    async def _memory_page(
        self, device: Device, identity: Identity, request: MemoryRequest
    ) -> None:
        calls = {
            "list": lambda: self._memory.List(memory_pb2.ListRequest(), metadata=metadata),
            "forget": lambda: self._memory.Forget(
                memory_pb2.ItemRequest(item=request.item), metadata=metadata
            ),
            "restore": lambda: self._memory.Restore(
                memory_pb2.ItemRequest(item=request.item), metadata=metadata
            ),
            "forget_all": lambda: self._memory.ForgetAll(
                memory_pb2.ForgetAllRequest(), metadata=metadata
            ),
        }
        metadata = identity.metadata()
        try:
            page = await calls[request.action]()
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                raise FrameError("bad_frame", "There is no such memory to change.") from None
            raise FrameError(
                "unavailable",
                "Your memories can't be shown right now. Please try again in a moment.",
            ) from None
        items = [
            {
                "item": item.item,
                "text": item.text,
                "origin": item.origin,
                "at": item.at.ToDatetime(tzinfo=UTC).isoformat().replace("+00:00", "Z"),
            }
            for item in page.items
        ]
        await device.send(frames.outgoing("memory", items=items))
