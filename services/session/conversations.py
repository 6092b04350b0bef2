"""Each person's one conversation: made on first contact, the same forever, numbering its
messages."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy import bindparam, or_, select, update
from sqlalchemy.engine import Connection

from session.tables import conversations, messages, updates
from violet.clock import Clock, utc_now
from violet.database import Database, across_people, conflict_insert, is_postgres_session


@dataclass(frozen=True)
class Conversation:
    id: str
    person: str


@dataclass(frozen=True)
class Opened:
    conversation: Conversation
    # The number of the conversation's last message (0 before the first).
    last_seq: int


_OF_PERSON = select(conversations.c.id).where(conversations.c.person == bindparam("person"))
_LAST_SEQ = select(conversations.c.last_seq).where(conversations.c.id == bindparam("conversation"))
# Written only when it changed: most openings find the zone as it was.
_KEEP_ZONE = (
    update(conversations)
    .where(conversations.c.id == bindparam("conversation"))
    .where(
        or_(
            conversations.c.time_zone.is_(None),
            conversations.c.time_zone != bindparam("zone"),
        )
    )
    .values(time_zone=bindparam("zone"))
)


class Conversations:
    def __init__(self, database: Database, clock: Clock = utc_now) -> None:
        self._database = database
        self._clock = clock

    async def conversation_of(self, person: str) -> Conversation:
        """The person's one conversation, made on first contact and the same forever."""
        return Conversation(await self._database.run(self._of_on, person), person)

    async def found(self, person: str) -> Conversation | None:
        """The person's conversation if they have one; none is made (a lookup about them must
        never bring back someone removed)."""
        found = await self._database.scalar(_OF_PERSON, {"person": person})
        return None if found is None else Conversation(str(found), person)

    async def opened(
        self,
        person: str,
        check: Callable[[Connection], str | None],
        then: Callable[[Connection], object] | None = None,
        zone: str = "",
    ) -> Opened:
        """The person's conversation as a device opens it, in one trip: `check` reads their
        conversation's id if there is one (it raises to refuse them: nothing is done), the
        conversation is made on first contact, `then` does what goes with the opening, the
        device's time `zone` (if it said one) is kept as the person's, and the number of its
        last message is read."""
        return await self._database.run(self._opened_on, person, check, then, zone)

    def _opened_on(
        self,
        connection: Connection,
        person: str,
        check: Callable[[Connection], str | None],
        then: Callable[[Connection], object] | None,
        zone: str,
    ) -> Opened:
        conversation_id = check(connection) or self._of_on(connection, person)
        if then is not None:
            then(connection)
        if zone:
            connection.execute(_KEEP_ZONE, {"conversation": conversation_id, "zone": zone})
        seq = connection.scalar(_LAST_SEQ, {"conversation": conversation_id})
        return Opened(Conversation(conversation_id, person), int(seq or 0))

    def _of_on(self, connection: Connection, person: str) -> str:
        """The person's conversation's id, the conversation made if they have none; one made
        meanwhile by another replica is theirs (the insert waits for it, then does nothing)."""
        found = connection.scalar(_OF_PERSON, {"person": person})
        if found is not None:
            return str(found)
        connection.execute(
            conflict_insert(conversations, postgres=is_postgres_session(connection))
            .values(
                id="c_" + secrets.token_hex(8),
                person=person,
                created_at=self._clock(),
                last_seq=0,
                summary="",
                fold_failures=0,
            )
            .on_conflict_do_nothing(index_elements=[conversations.c.person])
        )
        return str(connection.scalar(_OF_PERSON, {"person": person}))

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
