"""One device's websocket: hello, history replay, says and acks, and everything that follows.

Each device follows the conversation through its own stream from the session service, so every
connected device of the person receives every message and activity line, on any replica.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from datetime import UTC

import grpc
import jwt
from google.protobuf.timestamp_pb2 import Timestamp
from opentelemetry import trace
from starlette.websockets import WebSocket, WebSocketDisconnect

from gateway import frames, phrases
from gateway.allowlist import NOT_ALLOWED_TEXT, NotAllowed
from gateway.frames import (
    AccountRequest,
    DeleteRequest,
    DevicesRequest,
    DocumentRequest,
    FrameError,
    Hello,
    MemoryRequest,
    PushRequest,
    RemindersRequest,
    Say,
)
from gateway.limits import KEY_SETS_PER_HOUR, PersonLimiter, SaysInFlight
from gateway.notifications import PushFrames
from gateway.oidc import IssuerUnreachable
from gateway.signin import SignIn
from violet.channels import Peers
from violet.identity import Unauthorized, service_identity
from violet.language import ENGLISH, RECENT_MESSAGES, detect, phrase
from violet.metrics import SAYS_REFUSED
from violet.v1 import (
    accounts_pb2,
    accounts_pb2_grpc,
    documents_pb2,
    documents_pb2_grpc,
    memory_pb2,
    memory_pb2_grpc,
    persons_pb2,
    persons_pb2_grpc,
    session_pb2,
    session_pb2_grpc,
)

log = logging.getLogger(__name__)
tracer = trace.get_tracer(__name__)

CLOSE_UNAUTHORIZED = 4401
CLOSE_UNAVAILABLE = 1013
FOLLOW_RETRY_MAX_S = 5.0
# Deleting waits for the person's answer under way to finish first, then for every service.
DELETE_TIMEOUT_S = 120.0

# Before hello nothing tells the person's language: English.
UNAVAILABLE_TEXT = phrases.AWAY[ENGLISH]
SIGN_IN_UNAVAILABLE_TEXT = (
    "Violet can't check your sign-in right now. Please try again in a moment."
)
ALREADY_GREETED = "You have already said hello."
# What the worker's refusal of a document request means for the person.
DOCUMENT_REFUSALS = {
    grpc.StatusCode.NOT_FOUND: phrases.NO_SUCH_DOCUMENT,
    grpc.StatusCode.INVALID_ARGUMENT: phrases.NO_SUCH_DOCUMENT,
    grpc.StatusCode.ALREADY_EXISTS: phrases.DOCUMENT_IN_THE_WAY,
}
DocumentsAnswer = documents_pb2.DocumentsReply | documents_pb2.OpenedDocument


class SignedOut(Exception):
    """The person was deleted, or this device was signed out: it leaves, told which."""

    def __init__(self, error: grpc.aio.AioRpcError | None = None) -> None:
        super().__init__("signed out")
        self.phrase = signed_out_phrase(error)


def signed_out_phrase(error: grpc.aio.AioRpcError | None) -> phrases.Phrase:
    """What a device refused by the session is told: the device alone was signed out, or the
    whole account is gone."""
    device_alone = error is not None and "this device was signed out" in (error.details() or "")
    return phrases.DEVICE_SIGNED_OUT if device_alone else phrases.SIGNED_OUT


class Deleted(Exception):
    """This device deleted the person: it was told so, and its socket is closed."""


def device_digest(token: str) -> str:
    """The device, as the session knows it: a digest of its token, never the token."""
    return hashlib.sha256(token.encode()).hexdigest()


def issued_at(token: str) -> int:
    """When the (verified) token was issued, in Unix seconds; 0 when it does not say."""
    issued = jwt.decode(token, options={"verify_signature": False}).get("iat")
    return int(issued) if isinstance(issued, int | float) else 0


class Device:
    """One connected socket; sends are serialised so frames never interleave. `unanswered`
    holds the ids (as stored) of its says counted in flight whose answers have not come."""

    def __init__(self, websocket: WebSocket) -> None:
        self.websocket = websocket
        self.unanswered: set[str] = set()
        self._sending = asyncio.Lock()
        # When the device's token was issued (Unix seconds), as its calls carry it, and a digest
        # of the token: the device, as the session knows it (never the token itself).
        self.signed_in_at = 0
        self.signed_in = ""
        # Held while this device's deletion is under way: the stream, ended by it, waits for
        # the answer to go first.
        self.deleting = asyncio.Lock()
        # Said goodbye: nothing more is sent.
        self.gone = False
        # The person's own latest messages, as this device sees them: refusals follow their
        # language.
        self._heard: deque[str] = deque(maxlen=RECENT_MESSAGES)

    def heard(self, text: str) -> None:
        self._heard.append(text)

    @property
    def language(self) -> str:
        return detect(list(self._heard))

    async def send(self, frame: str) -> None:
        async with self._sending:
            if self.gone:
                raise WebSocketDisconnect(CLOSE_UNAUTHORIZED)
            await self.websocket.send_text(frame)

    async def leave(self, frame: str, close_code: int) -> None:
        """Sends the last frame and closes the socket; frames sent after it are dropped."""
        async with self._sending:
            self.gone = True
            await self.websocket.send_text(frame)
            await self.websocket.close(close_code)

    async def refuse(self, code: str, text: str, close_code: int) -> None:
        with contextlib.suppress(Exception):
            await self.send(frames.error(code, text))
            await self.websocket.close(close_code)


def iso(stamp: Timestamp) -> str:
    return stamp.ToDatetime(tzinfo=UTC).isoformat().replace("+00:00", "Z")


def message_frame(message: session_pb2.ConversationMessage) -> str:
    fields = {
        "seq": message.seq,
        "from": message.author,
        "text": message.text,
        "at": iso(message.at),
    }
    if message.reply_to:
        fields["reply_to"] = say_id(message.reply_to)
    return frames.outgoing("message", **fields)


def stored_id(message_id: str) -> str:
    """A say's id as the session keeps it (JSON text, as ids of every kind once were)."""
    return json.dumps(message_id)


def say_id(stored: str) -> str | int:
    """A say's id as the device sent it. A stored id that is not what the gateway writes (a
    row from elsewhere) goes out as it is, so one odd row never stops a conversation."""
    try:
        decoded = json.loads(stored)
    except ValueError:
        return stored
    is_id = isinstance(decoded, str) or (isinstance(decoded, int) and not isinstance(decoded, bool))
    return decoded if is_id else stored


async def receive_raw(websocket: WebSocket) -> str | bytes:
    """The next frame as sent, text or binary; raises WebSocketDisconnect when the device goes."""
    message = await websocket.receive()
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(message.get("code", 1000))
    text: str | None = message.get("text")
    if text is not None:
        return text
    data: bytes | None = message.get("bytes")
    return data or b""


class LiveEndpoint:
    def __init__(
        self,
        peers: Peers,
        secret: str,
        limits: tuple[PersonLimiter, SaysInFlight],
        hello_timeout_s: float,
        sign_in: SignIn | None = None,
    ) -> None:
        """`secret` signs the internal calls made for a device's person; `limits` are the
        person's rate and this replica's bound on says in flight; `sign_in` checks the hello's
        token (by default, local device tokens signed with `secret`)."""
        self._peers = peers
        self._secret = secret
        self._sign_in = sign_in or SignIn(secret)
        self._limiter, self._in_flight = limits
        self._key_sets = PersonLimiter.per_hour(KEY_SETS_PER_HOUR)
        self._hello_timeout_s = hello_timeout_s
        self._push = PushFrames(peers)

    # Stubs are made on first use: gRPC channels belong to the event loop that serves.
    @property
    def _session(self) -> session_pb2_grpc.SessionAsyncStub:
        return self._peers.stub("session", session_pb2_grpc.SessionStub)

    @property
    def _memory(self) -> memory_pb2_grpc.MemoryAsyncStub:
        return self._peers.stub("memory", memory_pb2_grpc.MemoryStub)

    @property
    def _documents(self) -> documents_pb2_grpc.DocumentsAsyncStub:
        return self._peers.stub("worker", documents_pb2_grpc.DocumentsStub)

    def _internal(self, person: str) -> tuple[tuple[str, str], ...]:
        """Metadata of an internal call for the device's person: the device's own token never
        travels past the gateway."""
        return service_identity(person, self._secret).metadata()

    async def serve(self, websocket: WebSocket) -> None:
        await websocket.accept()
        device = Device(websocket)
        greeted = await self._greet(device)
        if greeted is None:
            return
        person, hello = greeted
        device.signed_in_at = issued_at(hello.token)
        device.signed_in = device_digest(hello.token)
        opening = session_pb2.OpenRequest(
            signed_in_at_unix=device.signed_in_at,
            device=device.signed_in,
            agent=websocket.headers.get("user-agent", ""),
            time_zone=hello.zone,
        )
        try:
            opened = await self._session.Open(opening, metadata=self._internal(person))
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.UNAUTHENTICATED:
                told = phrase(signed_out_phrase(error), ENGLISH)
                await device.refuse("unauthorized", told, CLOSE_UNAUTHORIZED)
            else:
                await device.refuse("unavailable", UNAVAILABLE_TEXT, CLOSE_UNAVAILABLE)
            return
        welcome = frames.outgoing("welcome", conversation=opened.conversation, seq=opened.seq)
        with contextlib.suppress(WebSocketDisconnect):
            await device.send(welcome)
            # A device that claims to show more than there is is shown what comes next.
            await self._connected(device, person, min(hello.since, opened.seq), opened.seq)

    async def _connected(self, device: Device, person: str, since: int, newest: int) -> None:
        """Streams the conversation to the device and takes its frames, until it goes. Should
        either side end otherwise, the socket closes too: the device, connecting again, is
        served afresh rather than left half answered."""
        replayed = asyncio.Event()
        sides = (
            asyncio.create_task(self._follow(device, person, since, newest, replayed)),
            asyncio.create_task(self._converse(device, person, replayed)),
        )
        try:
            await asyncio.wait(sides, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for side in sides:
                side.cancel()
            ended = await asyncio.gather(*sides, return_exceptions=True)
            for stored in device.unanswered:  # nobody here would see these answered
                self._in_flight.done(person, stored)
        if device.gone:
            return  # it was told it deleted the person, and closed
        failures = [
            outcome
            for outcome in ended
            if isinstance(outcome, Exception) and not isinstance(outcome, WebSocketDisconnect)
        ]
        gone = next((f for f in failures if isinstance(f, SignedOut)), None)
        if gone is not None:
            signed_out = phrase(gone.phrase, device.language)
            await device.refuse("unauthorized", signed_out, CLOSE_UNAUTHORIZED)
        elif failures:
            log.error("a device's connection failed", exc_info=failures[0])
            away = phrase(phrases.AWAY, device.language)
            await device.refuse("unavailable", away, CLOSE_UNAVAILABLE)

    async def _greet(self, device: Device) -> tuple[str, Hello] | None:
        """The person of the device's hello, and the hello. Frames that are not a hello get their
        error and the device may still say hello, until the hello time is up; the time to
        check its token (an issuer's keys may have to be fetched) is not the device's."""
        try:
            hello = await self._hello(device)
            return await self._sign_in.person(hello.token), hello
        except TimeoutError:
            await device.refuse(
                "unauthorized", "Say hello with your token first.", CLOSE_UNAUTHORIZED
            )
        except FrameError as error:
            await device.refuse(error.code, error.text, CLOSE_UNAUTHORIZED)
        except NotAllowed:
            await device.refuse("unauthorized", NOT_ALLOWED_TEXT, CLOSE_UNAUTHORIZED)
        except Unauthorized:
            await device.refuse(
                "unauthorized",
                "That sign-in has expired or is not valid. Please sign in again.",
                CLOSE_UNAUTHORIZED,
            )
        except IssuerUnreachable as error:
            log.warning("a sign-in could not be checked", extra={"error": str(error)})
            await device.refuse("unavailable", SIGN_IN_UNAVAILABLE_TEXT, CLOSE_UNAVAILABLE)
        except WebSocketDisconnect:
            pass
        return None

    async def _hello(self, device: Device) -> Hello:
        """The device's hello, within the hello time."""
        async with asyncio.timeout(self._hello_timeout_s):
            while True:
                try:
                    hello = frames.parse(await receive_raw(device.websocket))
                except FrameError as error:
                    if error.code == "unauthorized":
                        raise
                    await device.send(frames.error(error.code, error.text))
                    continue
                if not isinstance(hello, Hello):
                    raise FrameError("unauthorized", "Start with hello and your token.")
                return hello

    async def _follow(
        self,
        device: Device,
        person: str,
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
                    session_pb2.FollowRequest(since=last, device=device.signed_in),
                    metadata=self._internal(person),
                    wait_for_ready=True,
                )
                try:
                    async for event in stream:
                        seq = await self._show(device, person, event)
                        if seq is not None:
                            last = seq
                            if last >= target:
                                replayed.set()
                        delay = 0.1
                finally:
                    # Stopped while sending to the device, the call would otherwise end only
                    # once collected, and the person would count as here until then: no
                    # notification for what Violet tells meanwhile.
                    stream.cancel()
            except grpc.aio.AioRpcError as error:
                if error.code() == grpc.StatusCode.UNAUTHENTICATED:
                    async with device.deleting:  # a deletion asked here is answered first
                        raise SignedOut(error) from None  # deleted, or this device signed out
                log.info(
                    "conversation stream ended; reconnecting", extra={"code": error.code().name}
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, FOLLOW_RETRY_MAX_S)

    async def _show(
        self, device: Device, person: str, event: session_pb2.ConversationEvent
    ) -> int | None:
        """Sends the event to the device; the seq of the message it carries."""
        if not event.HasField("message"):
            await device.send(frames.outgoing("activity", text=event.activity.text))
            return None
        if event.message.author == "you":
            device.heard(event.message.text)
        self._answered(device, person, event.message)
        await device.send(message_frame(event.message))
        return event.message.seq

    def _answered(
        self, device: Device, person: str, message: session_pb2.ConversationMessage
    ) -> None:
        if message.reply_to:
            self._in_flight.done(person, message.reply_to)
            device.unanswered.discard(message.reply_to)

    async def _converse(self, device: Device, person: str, replayed: asyncio.Event) -> None:
        await replayed.wait()  # history first, before anything else
        while True:
            raw = await receive_raw(device.websocket)
            try:
                frame = frames.parse(raw)
                await self._handle(device, person, frame)
            except FrameError as error:
                # Only a hello is ever unauthorized, and this device has said hello already.
                if error.code == "unauthorized":
                    error = FrameError("bad_frame", ALREADY_GREETED)
                await device.send(frames.error(error.code, error.told_in(device.language)))

    async def _handle(self, device: Device, person: str, frame: frames.Incoming) -> None:
        if isinstance(frame, Hello):
            raise FrameError("bad_frame", ALREADY_GREETED)
        if isinstance(frame, Say):
            await self._say(device, person, frame)
        elif isinstance(frame, MemoryRequest):
            await self._memory_page(device, person, frame)
        elif isinstance(frame, DocumentRequest):
            await self._documents_page(device, person, frame)
        elif isinstance(frame, AccountRequest):
            await self._account(device, person, frame)
        elif isinstance(frame, DeleteRequest):
            await self._delete_everything(device, person, frame)
        elif isinstance(frame, PushRequest):
            metadata = self._internal(person)
            await device.send(await self._push.answer(person, frame, metadata, device.signed_in))
        elif isinstance(frame, DevicesRequest):
            await self._devices(device, person, frame)
        elif isinstance(frame, RemindersRequest):
            await self._reminders(device, person, frame)

    async def _say(self, device: Device, person: str, say: Say) -> None:
        if not self._limiter.allow(person):
            raise FrameError("rate_limited", phrases.TOO_MANY)
        stored = stored_id(say.id)
        if not self._in_flight.take(person, stored):
            SAYS_REFUSED.add(1, {"violet.limit": "gateway"})
            raise FrameError("unavailable", phrases.BUSY)
        # A say starts the turn's trace: every service's spans for it share this trace id.
        with tracer.start_as_current_span("say", kind=trace.SpanKind.SERVER) as span:
            span.set_attribute("violet.say.chars", len(say.text))
            span.set_attribute("violet.say.in_flight", len(self._in_flight))
            try:
                reply = await self._store(person, stored, say.text)
            except FrameError:
                self._in_flight.done(person, stored)  # nothing was stored
                raise
        if reply.duplicate and stored not in device.unanswered:
            # Stored before, and answered already or counted by a connection now gone: a
            # resend that would otherwise hold a place no answer frees.
            self._in_flight.done(person, stored)
        else:
            device.unanswered.add(stored)
        await device.send(frames.outgoing("ack", id=say.id, seq=reply.seq))

    async def _store(self, person: str, stored: str, text: str) -> session_pb2.SayReply:
        try:
            return await self._session.Say(
                session_pb2.SayRequest(client_id=stored, text=text),
                metadata=self._internal(person),
            )
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.INVALID_ARGUMENT:
                raise FrameError("bad_frame", phrases.NOT_TAKEN) from None
            if error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                SAYS_REFUSED.add(1, {"violet.limit": "session"})
                raise FrameError("unavailable", phrases.BUSY) from None
            raise FrameError("unavailable", phrases.AWAY) from None

    async def _devices(self, device: Device, person: str, request: DevicesRequest) -> None:
        """The person's devices, listed, or after one (or all) signed out. Signed out, this
        very device is told so by its stream's end, like any other."""
        stub = self._peers.stub("session", persons_pb2_grpc.YourDataStub)
        metadata = self._internal(person)
        try:
            if request.action == "list":
                listed = await stub.Devices(
                    persons_pb2.DevicesRequest(asking=device.signed_in), metadata=metadata
                )
            else:
                asked = persons_pb2.SignOutRequest(
                    device=request.device, all=request.all, asking=device.signed_in
                )
                listed = await stub.SignOut(asked, metadata=metadata)
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                raise FrameError("bad_frame", phrases.NO_SUCH_DEVICE) from None
            if error.code() == grpc.StatusCode.UNAUTHENTICATED:
                raise SignedOut(error) from None
            raise FrameError("unavailable", phrases.DEVICES_AWAY) from None
        await device.send(frames.outgoing("devices", devices=[_device(d) for d in listed.devices]))

    async def _reminders(self, device: Device, person: str, request: RemindersRequest) -> None:
        """The person's open reminders, listed, or after one was cancelled."""
        stub = self._peers.stub("session", persons_pb2_grpc.YourDataStub)
        metadata = self._internal(person)
        asking, language = device.signed_in, device.language
        try:
            if request.action == "list":
                listed = await stub.Reminders(
                    persons_pb2.RemindersRequest(asking=asking, language=language),
                    metadata=metadata,
                )
            else:
                cancel = persons_pb2.CancelReminderRequest(
                    reminder=request.reminder, asking=asking, language=language
                )
                listed = await stub.CancelReminder(cancel, metadata=metadata)
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                raise FrameError("bad_frame", phrases.NO_SUCH_REMINDER) from None
            if error.code() == grpc.StatusCode.UNAUTHENTICATED:
                raise SignedOut(error) from None
            raise FrameError("unavailable", phrases.REMINDERS_AWAY) from None
        items = [_reminder(reminder) for reminder in listed.reminders]
        await device.send(frames.outgoing("reminders", items=items))

    async def _account(self, device: Device, person: str, request: AccountRequest) -> None:
        """The person's own key and month: shown, set (checked first) or removed."""
        if request.action == "set_key" and not self._key_sets.allow(person):
            raise FrameError("rate_limited", phrases.KEY_SETS_TOO_MANY)
        stub = self._peers.stub("session", accounts_pb2_grpc.AccountsStub)
        metadata = self._internal(person)
        calls: dict[str, Callable[[], Awaitable[accounts_pb2.AccountReply]]] = {
            "show": lambda: stub.Show(accounts_pb2.ShowRequest(), metadata=metadata),
            "set_key": lambda: stub.SetKey(
                accounts_pb2.SetKeyRequest(key=request.key), metadata=metadata
            ),
            "remove_key": lambda: stub.RemoveKey(
                accounts_pb2.RemoveKeyRequest(), metadata=metadata
            ),
        }
        try:
            account = await calls[request.action]()
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.INVALID_ARGUMENT:
                raise FrameError("bad_frame", phrases.NOT_A_KEY) from None
            if error.code() == grpc.StatusCode.FAILED_PRECONDITION:
                raise FrameError("bad_frame", phrases.KEYS_NOT_HERE) from None
            raise FrameError("unavailable", phrases.ACCOUNT_AWAY) from None
        await device.send(
            frames.outgoing(
                "account",
                key=account.key,
                ending=account.ending,
                month_usd=round(account.month_usd, 4),
                text=account.text,
                note=account.refused,
                own_keys=account.own_keys,
            )
        )

    async def _delete_everything(self, device: Device, person: str, request: DeleteRequest) -> None:
        """Removes the person everywhere. This device is told and closed by the gateway itself;
        the others are signed out as their streams end."""
        stub = self._peers.stub("session", persons_pb2_grpc.YourDataStub)
        asked = persons_pb2.DeleteMeRequest(
            confirmation=request.confirmation, signed_in_at_unix=device.signed_in_at
        )
        async with device.deleting:
            try:
                await stub.Delete(asked, metadata=self._internal(person), timeout=DELETE_TIMEOUT_S)
            except grpc.aio.AioRpcError as error:
                await self._not_deleted(device, error)
                return
            deleted = phrase(phrases.DELETED, device.language)
            await device.leave(frames.outgoing("account.deleted", text=deleted), CLOSE_UNAUTHORIZED)
        raise Deleted

    async def _not_deleted(self, device: Device, error: grpc.aio.AioRpcError) -> None:
        """Tells the device why nothing (or not all) was deleted, before its stream may end."""
        if error.code() == grpc.StatusCode.UNAUTHENTICATED:
            raise SignedOut(error) from None  # deleted, or signed out, since it signed in
        if error.code() == grpc.StatusCode.FAILED_PRECONDITION:
            refusal = frames.error("bad_frame", phrase(phrases.NOTHING_DELETED, device.language))
        else:
            log.warning("a deletion did not finish", extra={"code": error.code().name})
            refusal = frames.error("unavailable", phrase(phrases.DELETE_AWAY, device.language))
        await device.send(refusal)

    async def _memory_page(self, device: Device, person: str, request: MemoryRequest) -> None:
        metadata = self._internal(person)
        calls: dict[str, Callable[[], Awaitable[memory_pb2.ListReply]]] = {
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
        try:
            page = await calls[request.action]()
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                raise FrameError("bad_frame", phrases.NO_SUCH_MEMORY) from None
            raise FrameError("unavailable", phrases.PAGE_AWAY) from None
        items = [
            {"item": item.item, "text": item.text, "origin": item.origin, "at": iso(item.at)}
            for item in page.items
        ]
        told = [
            {"item": item.item, "text": item.text, "source": item.source, "at": iso(item.at)}
            for item in page.told
        ]
        await device.send(frames.outgoing("memory", items=items, told=told))

    async def _documents_page(self, device: Device, person: str, request: DocumentRequest) -> None:
        """The person's documents after the change asked for, or one of them opened."""
        metadata = self._internal(person)
        named = documents_pb2.DocumentRequest(name=request.name)
        calls: dict[str, Callable[[], Awaitable[DocumentsAnswer]]] = {
            "list": lambda: self._documents.List(
                documents_pb2.ListDocumentsRequest(), metadata=metadata
            ),
            "open": lambda: self._documents.Open(named, metadata=metadata),
            "delete": lambda: self._documents.Delete(named, metadata=metadata),
            "restore": lambda: self._documents.Restore(named, metadata=metadata),
        }
        try:
            reply = await calls[request.action]()
        except grpc.aio.AioRpcError as error:
            refusal = DOCUMENT_REFUSALS.get(error.code())
            if refusal is None:
                raise FrameError("unavailable", phrases.DOCUMENTS_AWAY) from None
            raise FrameError("bad_frame", refusal) from None
        if isinstance(reply, documents_pb2.OpenedDocument):
            opened = {"name": reply.name, "title": reply.title, "text": reply.text}
            await device.send(frames.outgoing("document", **opened))
            return
        items = [
            {
                "name": entry.name,
                "title": entry.title,
                "at": iso(entry.modified),
                "size": entry.size,
            }
            for entry in reply.documents
        ]
        await device.send(frames.outgoing("documents", items=items))


def _reminder(reminder: persons_pb2.Reminder) -> dict[str, object]:
    """One of the person's reminders as the `reminders` frame shows it."""
    return {
        "reminder": reminder.reminder,
        "text": reminder.text,
        "when": reminder.when,
        "next": iso(reminder.next),
        "work": reminder.work,
    }


def _device(device: persons_pb2.Device) -> dict[str, object]:
    """One of the person's devices as the `devices` frame shows it."""
    return {
        "device": device.device,
        "agent": device.agent,
        "first_seen": iso(device.first_seen),
        "last_seen": iso(device.last_seen),
        "this": device.this_device,
    }
