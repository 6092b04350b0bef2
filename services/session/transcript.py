"""The transcript: every message of a person's one conversation, append-only, numbered by seq.

It is at once the history every device opens, the outbox the gateway streams from, and the
source that rebuilds the model's context on any replica.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import insert, select, text, update
from sqlalchemy.exc import IntegrityError

from session.conversations import Conversation
from session.model_conversations import ModelConversation
from session.tables import conversations, messages, updates
from violet.clock import Clock, utc_now
from violet.database import Database, Session
from violet.telemetry import carrier

NOTIFY_CHANNEL = "violet_transcript"
# More than any model conversation holds before a rollover is forced.
LIVE_LIMIT = 100_000


@dataclass(frozen=True)
class Message:
    seq: int
    author: str  # "you" or "violet"
    text: str
    at: datetime
    reply_to: str | None = None
    client_id: str | None = None
    trace_context: str | None = None


@dataclass(frozen=True)
class Appended:
    seq: int
    duplicate: bool


def _digest(text_: str) -> str:
    return hashlib.sha256(text_.encode()).hexdigest()


def _row_to_message(row) -> Message:  # type: ignore[no-untyped-def]
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
        digest = _digest(text_)
        existing = await self._find_say(conversation, client_id, digest)
        if existing is not None:
            return Appended(existing, duplicate=True)
        try:
            said = await self._append(
                conversation,
                author="you",
                text_=text_,
                client_id=client_id,
                text_digest=digest,
                answered=False,
                trace_context=carrier(),
            )
        except IntegrityError:  # the same retry raced us and won
            existing = await self._find_say(conversation, client_id, digest)
            if existing is None:
                raise
            return Appended(existing, duplicate=True)
        return Appended(said.seq, duplicate=False)

    async def append_answer(
        self,
        conversation: Conversation,
        answering: Message,
        text_: str,
        model_conversation: str,
    ) -> Message:
        """Stores Violet's answer and marks the message it answers, in one transaction."""

        async def mark_answered(tx: Session, _: int) -> None:
            await tx.execute(
                update(messages)
                .where(messages.c.conversation_id == conversation.id)
                .where(messages.c.seq == answering.seq)
                .values(answered=True, model_conversation_id=model_conversation)
            )

        return await self._append(
            conversation,
            author="violet",
            text_=text_,
            also=mark_answered,
            reply_to=answering.client_id,
            answered=True,
            model_conversation_id=model_conversation,
        )

    async def append_told(
        self,
        conversation: Conversation,
        update_id: int,
        text_: str,
        model_conversation: str,
        then: Callable[[Session, int], Awaitable[None]] | None = None,
    ) -> Message:
        """Stores Violet's telling of a work update and marks the update told, together; `then`
        is done in the same transaction."""

        async def mark_told(tx: Session, seq: int) -> None:
            await tx.execute(update(updates).where(updates.c.id == update_id).values(told_seq=seq))
            if then is not None:
                await then(tx, seq)

        return await self._append(
            conversation,
            author="violet",
            text_=text_,
            also=mark_told,
            answered=True,
            model_conversation_id=model_conversation,
        )

    async def _append(
        self,
        conversation: Conversation,
        *,
        author: str,
        text_: str,
        also: Callable[[Session, int], Awaitable[None]] | None = None,
        reply_to: str | None = None,
        client_id: str | None = None,
        trace_context: str | None = None,
        **columns: object,
    ) -> Message:
        moment = self._clock()
        async with self._database() as tx, tx.begin():
            seq = await tx.scalar(
                update(conversations)
                .where(conversations.c.id == conversation.id)
                .values(last_seq=conversations.c.last_seq + 1)
                .returning(conversations.c.last_seq)
            )
            await tx.execute(
                insert(messages).values(
                    conversation_id=conversation.id,
                    seq=seq,
                    author=author,
                    text=text_,
                    at=moment,
                    reply_to=reply_to,
                    client_id=client_id,
                    trace_context=trace_context,
                    **columns,
                )
            )
            if also is not None:
                await also(tx, seq)
            if self._notify:
                await tx.execute(
                    text("SELECT pg_notify(:channel, :conversation)"),
                    {"channel": NOTIFY_CHANNEL, "conversation": conversation.id},
                )
        return Message(int(seq), author, text_, moment, reply_to, client_id, trace_context)

    async def notify_activity(self, conversation: Conversation, line: str) -> None:
        """Sends an activity line to every replica's followers through PostgreSQL."""
        payload = json.dumps({"conversation": conversation.id, "activity": line})
        async with self._database() as tx, tx.begin():
            await tx.execute(
                text("SELECT pg_notify(:channel, :payload)"),
                {"channel": NOTIFY_CHANNEL, "payload": payload},
            )

    @property
    def notifies(self) -> bool:
        return self._notify

    async def _find_say(
        self, conversation: Conversation, client_id: str, digest: str
    ) -> int | None:
        async with self._database() as db:
            return await db.scalar(
                select(messages.c.seq)
                .where(messages.c.conversation_id == conversation.id)
                .where(messages.c.client_id == client_id)
                .where(messages.c.text_digest == digest)
            )

    async def since(self, conversation_id: str, seq: int, limit: int = 500) -> list[Message]:
        async with self._database() as db:
            rows = await db.execute(
                select(messages)
                .where(messages.c.conversation_id == conversation_id)
                .where(messages.c.seq > seq)
                .order_by(messages.c.seq)
                .limit(limit)
            )
            return [_row_to_message(row) for row in rows]

    async def live(self, conversation_id: str, model: ModelConversation) -> list[Message]:
        """The messages the model conversation holds; older ones are in the summary."""
        return await self.since(conversation_id, model.carry_from_seq - 1, limit=LIVE_LIMIT)

    async def next_unanswered(self, conversation_id: str) -> Message | None:
        async with self._database() as db:
            row = (
                await db.execute(
                    select(messages)
                    .where(messages.c.conversation_id == conversation_id)
                    .where(messages.c.author == "you")
                    .where(messages.c.answered.is_(False))
                    .order_by(messages.c.seq)
                    .limit(1)
                )
            ).first()
            return _row_to_message(row) if row else None
