"""The transcript: every message of a person's one conversation, append-only, numbered by seq.

It is at once the history every device opens, the outbox the gateway streams from, and the
source that rebuilds the model's context on any replica.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import bindparam, insert, select, text, update
from sqlalchemy.engine import Connection, Row
from sqlalchemy.exc import IntegrityError

from session.conversations import Conversation
from session.tables import conversations, messages, updates
from violet.clock import Clock, utc_now
from violet.database import Database
from violet.telemetry import carrier

NOTIFY_CHANNEL = "violet_transcript"
# Messages a read of what is new returns at most.
SINCE_PAGE = 500
# More than any model conversation holds before a rollover is forced.
LIVE_LIMIT = 100_000

# What a transaction that stores a message also does, given the connection and the new seq.
Also = Callable[[Connection, int], None]
R = TypeVar("R")

# The statements a turn runs, built once: building one costs more CPU than running it.
_CONVERSATION = messages.c.conversation_id == bindparam("conversation")
_FIND_SAY = select(messages.c.seq).where(
    _CONVERSATION,
    messages.c.client_id == bindparam("client"),
    messages.c.text_digest == bindparam("digest"),
)
_SINCE = (
    select(messages)
    .where(_CONVERSATION, messages.c.seq > bindparam("after"))
    .order_by(messages.c.seq)
    .limit(bindparam("most"))
)
_NEXT_UNANSWERED = (
    select(messages)
    .where(_CONVERSATION, messages.c.author == "you", messages.c.answered.is_(False))
    .order_by(messages.c.seq)
    .limit(1)
)
_NEXT_SEQ = (
    update(conversations)
    .where(conversations.c.id == bindparam("conversation"))
    .values(last_seq=conversations.c.last_seq + 1)
    .returning(conversations.c.last_seq)
)
_INSERT = insert(messages)
_MARK_ANSWERED = (
    update(messages)
    .where(_CONVERSATION, messages.c.seq == bindparam("answering"))
    .values(answered=True, model_conversation_id=bindparam("model"))
)
_MARK_TOLD = (
    update(updates).where(updates.c.id == bindparam("update")).values(told_seq=bindparam("told"))
)
_NOTIFY = text("SELECT pg_notify(:channel, :payload)")


@dataclass(frozen=True)
class Message:
    seq: int
    author: str  # "you" or "violet"
    text: str
    at: datetime
    reply_to: str | None = None
    client_id: str | None = None
    trace_context: str | None = None


# Which conversation a say goes to, read in the say's own trip: its id, or None when the person
# has none yet.
Destination = Callable[[Connection], str | None]


@dataclass(frozen=True)
class Appended:
    seq: int
    duplicate: bool
    # The message as stored; None for a duplicate.
    stored: Message | None = None


def _digest(text_: str) -> str:
    return hashlib.sha256(text_.encode()).hexdigest()


def _row_to_message(row: Row[Any]) -> Message:
    return Message(
        row.seq, row.author, row.text, row.at, row.reply_to, row.client_id, row.trace_context
    )


class Transcript:
    def __init__(self, database: Database, notify: bool, clock: Clock = utc_now) -> None:
        self._database = database
        self._notify = notify  # PostgreSQL NOTIFY, so other replicas' streams wake at once
        self._clock = clock

    async def append_say(self, conversation: Conversation, client_id: str, text_: str) -> Appended:
        """Stores what the person said, once per (device id, text): a retry gets the same seq."""
        placed = await self.append_say_to(lambda _: conversation.id, client_id, text_, nothing_more)
        if placed is None:
            raise RuntimeError("a say named its conversation and was not stored")
        return placed[1]

    async def append_say_to(
        self,
        destination: Destination,
        client_id: str,
        text_: str,
        then: Callable[[Connection, str], R],
    ) -> tuple[str, Appended, R | None] | None:
        """`append_say` to the conversation `destination` reads in the say's own trip (it may
        raise to refuse the say): that conversation's id, the say, and what `then` (given the
        conversation's id) did in the same trip once the say was stored (None for a
        duplicate); None when `destination` names no conversation (nothing stored)."""
        digest = _digest(text_)
        message = Message(0, "you", text_, self._clock(), None, client_id, carrier())
        try:
            return await self._database.run(self._say, destination, message, digest, then)
        except IntegrityError:  # the same retry raced us and won
            found = await self._database.run(_found_say, destination, client_id, digest)
            if found is None:
                raise
            return found

    def _say(
        self,
        connection: Connection,
        destination: Destination,
        said: Message,
        digest: str,
        then: Callable[[Connection, str], R],
    ) -> tuple[str, Appended, R | None] | None:
        conversation_id = destination(connection)
        if conversation_id is None:
            return None
        existing = _existing_say_on(connection, conversation_id, said.client_id, digest)
        if existing is not None:
            return conversation_id, existing, None
        seq = self._store(connection, conversation_id, said, digest=digest, answered=False)
        stored = Appended(seq, duplicate=False, stored=replace(said, seq=seq))
        return conversation_id, stored, then(connection, conversation_id)

    async def append_answer(
        self,
        conversation: Conversation,
        answering: Message,
        text_: str,
        model_conversation: str,
    ) -> Message:
        """Stores Violet's answer and marks the message it answers, in one transaction."""
        return await self._database.run(
            self.answer_on, conversation.id, answering, text_, model_conversation
        )

    def answer_on(
        self,
        connection: Connection,
        conversation_id: str,
        answering: Message,
        text_: str,
        model_conversation: str,
    ) -> Message:
        """`append_answer` as work for `Database.run`, beside other work of the same trip."""
        answer = self._violet_says(
            connection, conversation_id, text_, model_conversation, answering.client_id
        )
        marked = {
            "conversation": conversation_id,
            "answering": answering.seq,
            "model": model_conversation,
        }
        connection.execute(_MARK_ANSWERED, marked)
        return answer

    async def append_told(
        self,
        conversation: Conversation,
        update_id: int,
        text_: str,
        model_conversation: str,
        then: Also | None = None,
    ) -> Message:
        """Stores Violet's telling of a work update and marks the update told, together; `then`
        is done in the same transaction."""
        return await self._database.run(
            self.told_on, conversation.id, update_id, text_, model_conversation, then
        )

    def told_on(
        self,
        connection: Connection,
        conversation_id: str,
        update_id: int,
        text_: str,
        model_conversation: str,
        then: Also | None = None,
    ) -> Message:
        """`append_told` as work for `Database.run`, beside other work of the same trip."""
        told = self._violet_says(connection, conversation_id, text_, model_conversation)
        connection.execute(_MARK_TOLD, {"update": update_id, "told": told.seq})
        if then is not None:
            then(connection, told.seq)
        return told

    def _violet_says(
        self,
        connection: Connection,
        conversation_id: str,
        text_: str,
        model_conversation: str,
        reply_to: str | None = None,
    ) -> Message:
        """Stores Violet's words, answered as they are stored: the message with its seq."""
        said = Message(0, "violet", text_, self._clock(), reply_to)
        seq = self._store(
            connection,
            conversation_id,
            said,
            answered=True,
            model_conversation_id=model_conversation,
        )
        return replace(said, seq=seq)

    def _store(
        self,
        connection: Connection,
        conversation_id: str,
        message: Message,
        *,
        answered: bool,
        digest: str | None = None,
        model_conversation_id: str | None = None,
    ) -> int:
        """Numbers and inserts the message (waking other replicas' followers): its seq."""
        seq = int(connection.scalar(_NEXT_SEQ, {"conversation": conversation_id}))
        connection.execute(
            _INSERT,
            {
                "conversation_id": conversation_id,
                "seq": seq,
                "author": message.author,
                "text": message.text,
                "at": message.at,
                "reply_to": message.reply_to,
                "client_id": message.client_id,
                "text_digest": digest,
                "answered": answered,
                "model_conversation_id": model_conversation_id,
                "trace_context": message.trace_context,
            },
        )
        if self._notify:
            payload = f"{conversation_id} {seq}"
            connection.execute(_NOTIFY, {"channel": NOTIFY_CHANNEL, "payload": payload})
        return seq

    async def notify_activity(self, conversation: Conversation, line: str) -> None:
        """Sends an activity line to every replica's followers through PostgreSQL."""
        payload = json.dumps({"conversation": conversation.id, "activity": line})
        await self._database.execute(_NOTIFY, {"channel": NOTIFY_CHANNEL, "payload": payload})

    @property
    def notifies(self) -> bool:
        return self._notify

    async def since(self, conversation_id: str, seq: int, limit: int = SINCE_PAGE) -> list[Message]:
        return await self._database.run(since_on, conversation_id, seq, limit)

    async def next_unanswered(self, conversation_id: str) -> Message | None:
        return await self._database.run(next_unanswered_on, conversation_id)


def nothing_more(connection: Connection, conversation_id: str) -> None:
    """Nothing else in a say's trip."""


def _found_say(
    connection: Connection, destination: Destination, client_id: str, digest: str
) -> tuple[str, Appended, None] | None:
    """The say already stored from this device with this text, if any, and where."""
    conversation_id = destination(connection)
    if conversation_id is None:
        return None
    existing = _existing_say_on(connection, conversation_id, client_id, digest)
    return None if existing is None else (conversation_id, existing, None)


def _existing_say_on(
    connection: Connection, conversation_id: str, client_id: str | None, digest: str
) -> Appended | None:
    keys = {"conversation": conversation_id, "client": client_id, "digest": digest}
    existing = connection.scalar(_FIND_SAY, keys)
    return None if existing is None else Appended(existing, duplicate=True)


def notified_seq(payload: str) -> tuple[str, int | None]:
    """A stored message's notification: its conversation and its number (None when it names
    none: the stream reads)."""
    conversation_id, _, seq = payload.partition(" ")
    return conversation_id, int(seq) if seq.isdigit() else None


# The reads as work for `Database.run`, so a turn can make several of them in one trip.


def since_on(
    connection: Connection, conversation_id: str, seq: int, limit: int = SINCE_PAGE
) -> list[Message]:
    """The messages after `seq`, oldest first."""
    rows = connection.execute(
        _SINCE, {"conversation": conversation_id, "after": seq, "most": limit}
    )
    return [_row_to_message(row) for row in rows]


def next_unanswered_on(connection: Connection, conversation_id: str) -> Message | None:
    """The person's oldest message not yet answered."""
    row = connection.execute(_NEXT_UNANSWERED, {"conversation": conversation_id}).first()
    return _row_to_message(row) if row else None
