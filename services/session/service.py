"""The session service's gRPC face: open the conversation (and ready memory), say, follow."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import datetime
from functools import partial

import grpc
from google.protobuf.json_format import MessageToDict
from sqlalchemy.engine import Connection

from session.activity import Activity
from session.conversations import Conversation, Opened
from session.devices import Devices
from session.erasure import Removed, Standing, signed_in
from session.feed import Feed
from session.memory_client import MemoryClient
from session.notify.presence import Presence
from session.person_service import may_serve, refusal
from session.runner import Taken, TurnRunner
from session.store import ConversationStore
from session.transcript import SINCE_PAGE, Appended, Message
from violet.clock import timestamp
from violet.identity import authenticate
from violet.keyring import redact_keys
from violet.v1 import session_pb2, session_pb2_grpc
from violet.zones import is_zone

MAX_TEXT = 8_000
# A device's id of up to 128 characters, kept as JSON text (escapes make it longer).
MAX_CLIENT_ID = 1_024


def to_event(message: Message) -> session_pb2.ConversationEvent:
    return session_pb2.ConversationEvent(
        message=session_pb2.ConversationMessage(
            seq=message.seq,
            author=message.author,
            text=message.text,
            at=timestamp(message.at),
            reply_to=message.reply_to if message.author == "violet" and message.reply_to else "",
        )
    )


class Backlogged(Exception):
    """Too many turns wait on this replica, and none of them is the person's."""


def say_destination(
    standing: Standing, person: str, queueing: frozenset[str] | None, connection: Connection
) -> str | None:
    """Where the person's say goes (a `Destination`): their conversation, once they may be
    served and unless the backlog (`TurnRunner.queueing`) is reached without them."""
    conversation_id = standing.check_on(connection, person)
    if conversation_id is not None and queueing is not None and conversation_id not in queueing:
        raise Backlogged
    return conversation_id


class SessionService(session_pb2_grpc.SessionServicer):
    def __init__(
        self,
        store: ConversationStore,
        runner: TurnRunner,
        feed: Feed,
        activity: Activity,
        memory: MemoryClient,
        secret: str,
        standing: Standing,
        devices: Devices,
        presence: Presence,
    ) -> None:
        self._conversations = store.conversations
        self._transcript = store.transcript
        self._updates = store.updates
        self._runner = runner
        self._feed = feed
        self._activity = activity
        self._memory = memory
        self._secret = secret
        self._standing = standing
        self._devices = devices
        self._presence = presence

    async def Open(
        self,
        request: session_pb2.OpenRequest,
        context: grpc.aio.ServicerContext[session_pb2.OpenRequest, session_pb2.OpenReply],
    ) -> session_pb2.OpenReply:
        identity = await authenticate(context, self._secret)
        person = identity.person
        signed_in_at = signed_in(request.signed_in_at_unix)
        hello = None
        if request.device and signed_in_at is not None:
            hello = partial(
                self._devices.seen_on,
                person=person,
                device=request.device,
                signed_in_at=signed_in_at,
                agent=request.agent,
            )
        if request.time_zone and not is_zone(request.time_zone):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "not a time zone's name")
        opened = await self._opened(
            person, context, signed_in_at, hello, request.device, request.time_zone
        )
        # A device opens the conversation as the person opens the app: their memory gets
        # ready while they read and type.
        self._memory.prepare(identity)
        return session_pb2.OpenReply(conversation=opened.conversation.id, seq=opened.last_seq)

    async def Say(
        self,
        request: session_pb2.SayRequest,
        context: grpc.aio.ServicerContext[session_pb2.SayRequest, session_pb2.SayReply],
    ) -> session_pb2.SayReply:
        identity = await authenticate(context, self._secret)
        if not request.client_id or len(request.client_id) > MAX_CLIENT_ID:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "a message needs a short id")
        if "\x00" in request.text + request.client_id:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "a message holds no NUL")
        if not request.text.strip():
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the message is empty")
        if len(request.text) > MAX_TEXT:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"a message holds at most {MAX_TEXT} characters"
            )
        # A key pasted into the conversation is kept only as its last characters: never in
        # the transcript, in memory, or before a model.
        said = redact_keys(request.text)
        conversation_id, appended, taken = await self._store_say(
            identity.person, request.client_id, said, context
        )
        conversation = Conversation(conversation_id, identity.person)
        self._feed.publish(conversation.id, appended.stored)
        self._runner.schedule(conversation, waiting=not appended.duplicate, taken=taken)
        return session_pb2.SayReply(seq=appended.seq, duplicate=appended.duplicate)

    async def _store_say(
        self,
        person: str,
        client_id: str,
        said: str,
        context: grpc.aio.ServicerContext[session_pb2.SayRequest, session_pb2.SayReply],
    ) -> tuple[str, Appended, Taken | None]:
        """Stores the say in the trip that reads the person's standing and conversation, and
        takes the turn for it (`TurnRunner.take_on`): one trip, not three; their first message
        opens the conversation first. Ends the call when the person may not be served, or the
        backlog is reached without them: nothing stored."""
        destination = partial(say_destination, self._standing, person, self._runner.queueing())
        take = self._runner.take_on
        try:
            placed = await self._transcript.append_say_to(destination, client_id, said, take)
            if placed is None:
                await self._conversations.conversation_of(person)
                placed = await self._transcript.append_say_to(destination, client_id, said, take)
        except Removed as removed:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, refusal(removed))
            raise
        except Backlogged:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED, "too many turns wait here; nothing was stored"
            )
            raise
        if placed is None:
            raise RuntimeError("the person's conversation was made and is not there")
        return placed

    async def Follow(
        self,
        request: session_pb2.FollowRequest,
        context: grpc.aio.ServicerContext[session_pb2.FollowRequest, session_pb2.ConversationEvent],
    ) -> AsyncIterator[session_pb2.ConversationEvent]:
        identity = await authenticate(context, self._secret)
        device = request.device
        # While a device follows, what Violet tells reaches it here, not as a notification.
        async with self._presence.following(identity.person) as follower:
            opened = await self._opened(
                identity.person, context, then=follower.arrive_on, device=request.device
            )
            conversation = opened.conversation
            following = self._feed.follow(conversation.id, request.since)
            try:
                woken = False
                while not self._feed.closed:
                    signal = self._feed.signal(conversation.id)
                    news = following.news()
                    more = False
                    if news is None:
                        news = await self._transcript.since(
                            conversation.id, following.last, SINCE_PAGE
                        )
                        more = len(news) == SINCE_PAGE
                    lines = following.take_lines()
                    if woken and not news and not lines:
                        # A removal wakes every follower with nothing new (before and after it
                        # erases), as does the safety-net poll: the device is signed out then.
                        # A wake that brings news needs no second read of the standing.
                        await may_serve(self._standing, identity.person, context, device=device)
                    for message in news:
                        yield to_event(message)
                        following.last = message.seq
                    for line in lines:
                        yield session_pb2.ConversationEvent(
                            activity=session_pb2.Activity(text=line)
                        )
                    if more:  # a long absence: the next page at once
                        following.must_read = True
                        continue
                    await self._feed.wait(following, signal)
                    woken = True
                    await follower.renew_if_due()
            finally:
                self._feed.unfollow(following)

    async def Deliver(
        self,
        request: session_pb2.WorkUpdate,
        context: grpc.aio.ServicerContext[session_pb2.WorkUpdate, session_pb2.DeliverReply],
    ) -> session_pb2.DeliverReply:
        identity = await authenticate(context, self._secret)
        conversation = (await self._opened(identity.person, context)).conversation
        kind = request.WhichOneof("update")
        if kind == "activity":
            await self._activity.show(conversation, request.activity)
        elif kind in ("result", "approval"):
            if not request.key or not request.topic:
                await context.abort(
                    grpc.StatusCode.INVALID_ARGUMENT, "an update needs a key and a topic"
                )
            if kind == "result":
                await self._updates.store(
                    conversation.id,
                    request.key,
                    request.topic,
                    "result",
                    request.result.text,
                    deeds=[MessageToDict(deed) for deed in request.result.deeds],
                    sources=[MessageToDict(source) for source in request.result.sources],
                )
                await self._activity.show(conversation, "")
            else:
                await self._updates.store(
                    conversation.id,
                    request.key,
                    request.topic,
                    "approval",
                    request.approval.question,
                    approval_ref=request.approval.approval,
                )
            self._runner.schedule(conversation)
        else:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the update is empty")
        return session_pb2.DeliverReply()

    async def _opened(
        self,
        person: str,
        context: grpc.aio.ServicerContext,
        signed_in_at: datetime | None = None,
        then: Callable[[Connection], object] | None = None,
        device: str = "",
        zone: str = "",
    ) -> Opened:
        """The person's one conversation, once they may be served (else the call ends): their
        standing (and the asking device's), the conversation (made on first contact) and `then`
        in one trip."""
        check = partial(
            self._standing.check_on, person=person, signed_in_at=signed_in_at, device=device
        )
        try:
            return await self._conversations.opened(person, check, then, zone)
        except Removed as removed:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, refusal(removed))
            raise
