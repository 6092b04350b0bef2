"""Each person's one conversation: made on first contact, the same forever, numbering its
messages."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import bindparam, insert, select
from sqlalchemy.exc import IntegrityError

from session.tables import conversations, messages, updates
from violet.clock import Clock, utc_now
from violet.database import Database, across_people


@dataclass(frozen=True)
class Conversation:
    id: str
    person: str


_OF_PERSON = select(conversations.c.id).where(conversations.c.person == bindparam("person"))
_LAST_SEQ = select(conversations.c.last_seq).where(conversations.c.id == bindparam("conversation"))


class Conversations:
    def __init__(self, database: Database, clock: Clock = utc_now) -> None:
        self._database = database
        self._clock = clock

    async def conversation_of(self, person: str) -> Conversation:
        """The person's one conversation, made on first contact and the same forever."""
        found = await self._conversation_id(person)
        if found:
            return Conversation(found, person)
        new_id = "c_" + secrets.token_hex(8)
        try:
            async with self._database() as tx, tx.begin():
                await tx.execute(
                    insert(conversations).values(
                        id=new_id,
                        person=person,
                        created_at=self._clock(),
                        last_seq=0,
                        summary="",
                        fold_failures=0,
                    )
                )
        except IntegrityError:  # another replica made it first: theirs is the one
            theirs = await self._conversation_id(person)
            if theirs is None:  # not a duplicate after all: the error stands
                raise
            return Conversation(theirs, person)
        return Conversation(new_id, person)

    async def _conversation_id(self, person: str) -> str | None:
        return await self._database.scalar(_OF_PERSON, {"person": person})

    async def last_seq(self, conversation: Conversation) -> int:
        value = await self._database.scalar(_LAST_SEQ, {"conversation": conversation.id})
        return int(value or 0)

    async def waiting(self) -> Sequence[Conversation]:
        """Conversations with a message not yet answered or an update not yet told (a replica
        died mid-turn, say)."""
        unanswered = select(messages.c.conversation_id).where(messages.c.answered.is_(False))
        untold = select(updates.c.conversation_id).where(updates.c.told_seq.is_(None))
        waiting = select(conversations.c.id, conversations.c.person).where(
            conversations.c.id.in_(unanswered.union(untold))
        )
        async with self._database() as db:
            rows = await across_people(db, "session_waiting_conversations", waiting)
            return [Conversation(row.id, row.person) for row in rows]
