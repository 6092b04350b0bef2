"""The transcript: every message of a person's one conversation, append-only, numbered by seq.

It is at once the history every device opens, the outbox the gateway streams from, and the
source that rebuilds the model's context on any replica.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import insert, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from session.tables import conversations, messages, model_conversations, updates
from violet import database
from violet.telemetry import carrier

NOTIFY_CHANNEL = "violet_transcript"


def now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Conversation:
    id: str
    person: str


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
class ModelConversation:
    """One of the model conversations behind the person's one conversation."""

    id: str
    carry_from_seq: int
    reason: str  # "first message", "rollover" or "moved server"


@dataclass(frozen=True)
class Appended:
    seq: int
    duplicate: bool


def _digest(text_: str) -> str:
    return hashlib.sha256(text_.encode()).hexdigest()


def _row_to_message(row) -> Message:  # type: ignore[no-untyped-def]
    at = row.at if row.at.tzinfo else row.at.replace(tzinfo=UTC)
    return Message(
        row.seq, row.author, row.text, at, row.reply_to, row.client_id, row.trace_context
    )


class Transcript:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], notify: bool) -> None:
        self._sessions = sessions
        self._notify = notify  # PostgreSQL NOTIFY, so other replicas' streams wake at once

    async def conversation_of(self, person: str) -> Conversation:
        """The person's one conversation, made on first contact and the same forever."""
        found = await self._conversation_id(person)
        if found:
            return Conversation(found, person)
        new_id = "c_" + secrets.token_hex(8)
        try:
            async with self._sessions() as db, db.begin():
                await db.execute(
                    insert(conversations).values(
                        id=new_id,
                        person=person,
                        created_at=now(),
                        last_seq=0,
                        summary="",
                        fold_failures=0,
                    )
                )
        except IntegrityError:  # another replica made it first: theirs is the one
            return Conversation(await self._conversation_id(person), person)
        return Conversation(new_id, person)

    async def _conversation_id(self, person: str) -> str | None:
        async with self._sessions() as db:
            return await db.scalar(
                select(conversations.c.id).where(conversations.c.person == person)
            )

    async def last_seq(self, conversation: Conversation) -> int:
        async with self._sessions() as db:
            value = await db.scalar(
                select(conversations.c.last_seq).where(conversations.c.id == conversation.id)
            )
            return int(value or 0)

    async def append_say(self, conversation: Conversation, client_id: str, text_: str) -> Appended:
        """Stores what the person said, once per (device id, text): a retry gets the same seq."""
        digest = _digest(text_)
        existing = await self._find_say(conversation, client_id, digest)
        if existing is not None:
            return Appended(existing, duplicate=True)
        try:
            seq = await self._append(
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
        return Appended(seq, duplicate=False)

    async def append_answer(
        self,
        conversation: Conversation,
        answering: Message,
        text_: str,
        model_conversation: str,
    ) -> int:
        """Stores Violet's answer and marks the message it answers, in one transaction."""

        async def mark_answered(db: AsyncSession, _: int) -> None:
            await db.execute(
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
        self, conversation: Conversation, update_id: int, text_: str, model_conversation: str
    ) -> int:
        """Stores Violet's telling of a work update and marks the update told, together."""

        async def mark_told(db: AsyncSession, seq: int) -> None:
            await db.execute(update(updates).where(updates.c.id == update_id).values(told_seq=seq))

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
        also: Callable[[AsyncSession, int], Awaitable[None]] | None = None,
        **columns: object,
    ) -> int:
        async with self._sessions() as db, db.begin():
            seq = await db.scalar(
                update(conversations)
                .where(conversations.c.id == conversation.id)
                .values(last_seq=conversations.c.last_seq + 1)
                .returning(conversations.c.last_seq)
            )
            await db.execute(
                insert(messages).values(
                    conversation_id=conversation.id,
                    seq=seq,
                    author=author,
                    text=text_,
                    at=now(),
                    **columns,
                )
            )
            if also is not None:
                await also(db, seq)
            if self._notify:
                await db.execute(
                    text("SELECT pg_notify(:channel, :conversation)"),
                    {"channel": NOTIFY_CHANNEL, "conversation": conversation.id},
                )
        return int(seq)

    async def notify_activity(self, conversation: Conversation, line: str) -> None:
        """Sends an activity line to every replica's followers through PostgreSQL."""
        payload = json.dumps({"conversation": conversation.id, "activity": line})
        async with self._sessions() as db, db.begin():
            await db.execute(
                text("SELECT pg_notify(:channel, :payload)"),
                {"channel": NOTIFY_CHANNEL, "payload": payload},
            )

    @property
    def notifies(self) -> bool:
        return self._notify

    async def _find_say(
        self, conversation: Conversation, client_id: str, digest: str
    ) -> int | None:
        async with self._sessions() as db:
            return await db.scalar(
                select(messages.c.seq)
                .where(messages.c.conversation_id == conversation.id)
                .where(messages.c.client_id == client_id)
                .where(messages.c.text_digest == digest)
            )

    async def since(self, conversation_id: str, seq: int, limit: int = 500) -> list[Message]:
        async with self._sessions() as db:
            rows = await db.execute(
                select(messages)
                .where(messages.c.conversation_id == conversation_id)
                .where(messages.c.seq > seq)
                .order_by(messages.c.seq)
                .limit(limit)
            )
            return [_row_to_message(row) for row in rows]

    async def recent(self, conversation_id: str, count: int) -> list[Message]:
        async with self._sessions() as db:
            rows = await db.execute(
                select(messages)
                .where(messages.c.conversation_id == conversation_id)
                .order_by(messages.c.seq.desc())
                .limit(count)
            )
            return [_row_to_message(row) for row in reversed(rows.all())]

    async def next_unanswered(self, conversation_id: str) -> Message | None:
        async with self._sessions() as db:
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

    async def waiting(self) -> Sequence[Conversation]:
        """Conversations with a message not yet answered or an update not yet told (a replica
        died mid-turn, say)."""
        unanswered = select(messages.c.conversation_id).where(messages.c.answered.is_(False))
        untold = select(updates.c.conversation_id).where(updates.c.told_seq.is_(None))
        waiting = select(conversations.c.id, conversations.c.person).where(
            conversations.c.id.in_(unanswered.union(untold))
        )
        async with self._sessions() as db:
            rows = await database.across_people(db, "session_waiting_conversations", waiting)
            return [Conversation(row.id, row.person) for row in rows]

    async def current_model_conversation(self, conversation_id: str) -> ModelConversation | None:
        async with self._sessions() as db:
            row = (
                await db.execute(
                    select(model_conversations)
                    .where(model_conversations.c.conversation_id == conversation_id)
                    .order_by(model_conversations.c.started_at.desc())
                    .limit(1)
                )
            ).first()
            return ModelConversation(row.id, row.carry_from_seq, row.reason) if row else None

    async def start_model_conversation(
        self, conversation_id: str, reason: str, replica: str, carry_from_seq: int
    ) -> ModelConversation:
        model = ModelConversation("m_" + secrets.token_hex(8), carry_from_seq, reason)
        async with self._sessions() as db, db.begin():
            await db.execute(
                insert(model_conversations).values(
                    id=model.id,
                    conversation_id=conversation_id,
                    started_at=now(),
                    reason=reason,
                    replica=replica,
                    carry_from_seq=carry_from_seq,
                )
            )
        return model

    async def live(self, conversation_id: str) -> list[Message]:
        """The messages the current model conversation holds; older ones are in the summary."""
        current = await self.current_model_conversation(conversation_id)
        return await self.since(
            conversation_id, (current.carry_from_seq if current else 1) - 1, limit=100_000
        )

    async def rollovers_since(self, conversation_id: str, since: datetime) -> list[datetime]:
        """When each rollover (a fold, or one forced at twice the window) after `since` was."""
        async with self._sessions() as db:
            rows = await db.scalars(
                select(model_conversations.c.started_at)
                .where(model_conversations.c.conversation_id == conversation_id)
                .where(model_conversations.c.reason == "rollover")
                .where(model_conversations.c.started_at > since)
            )
            return [at if at.tzinfo else at.replace(tzinfo=UTC) for at in rows]

    async def summary_of(self, conversation_id: str) -> str:
        async with self._sessions() as db:
            return (
                await db.scalar(
                    select(conversations.c.summary).where(conversations.c.id == conversation_id)
                )
                or ""
            )

    async def roll_over(
        self, conversation_id: str, summary: str, carry_from_seq: int, replica: str
    ) -> ModelConversation:
        """A new summary and a new model conversation that holds only the carried messages."""
        model = ModelConversation("m_" + secrets.token_hex(8), carry_from_seq, "rollover")
        async with self._sessions() as db, db.begin():
            await db.execute(
                update(conversations)
                .where(conversations.c.id == conversation_id)
                .values(summary=summary, fold_failures=0)
            )
            await db.execute(
                insert(model_conversations).values(
                    id=model.id,
                    conversation_id=conversation_id,
                    started_at=now(),
                    reason=model.reason,
                    replica=replica,
                    carry_from_seq=carry_from_seq,
                )
            )
        return model

    async def fold_failed(self, conversation_id: str) -> int:
        async with self._sessions() as db, db.begin():
            return int(
                await db.scalar(
                    update(conversations)
                    .where(conversations.c.id == conversation_id)
                    .values(fold_failures=conversations.c.fold_failures + 1)
                    .returning(conversations.c.fold_failures)
                )
            )
