"""The model conversations behind a person's one conversation: a new one at the first message,
at each rollover (a fold), and when the person moves to another replica."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, insert, select
from sqlalchemy.engine import Connection

from session.summaries import Summaries
from session.tables import model_conversations
from violet.clock import Clock, utc_now
from violet.database import Database, Statements


@dataclass(frozen=True)
class ModelConversation:
    """One of the model conversations behind the person's one conversation."""

    id: str
    carry_from_seq: int
    reason: str  # "first message", "rollover" or "moved server"


_CURRENT = (
    select(model_conversations)
    .where(model_conversations.c.conversation_id == bindparam("conversation"))
    .order_by(model_conversations.c.started_at.desc())
    .limit(1)
)


def current_on(connection: Connection, conversation_id: str) -> ModelConversation | None:
    """The model conversation the person's turns go to now: the last one started."""
    row = connection.execute(_CURRENT, {"conversation": conversation_id}).first()
    return ModelConversation(row.id, row.carry_from_seq, row.reason) if row else None


class ModelConversations:
    def __init__(self, database: Database, clock: Clock = utc_now) -> None:
        self._database = database
        self._clock = clock

    async def current(self, conversation_id: str) -> ModelConversation | None:
        return await self._database.run(current_on, conversation_id)

    async def start(
        self, conversation_id: str, reason: str, replica: str, carry_from_seq: int
    ) -> ModelConversation:
        model = ModelConversation("m_" + secrets.token_hex(8), carry_from_seq, reason)
        await self._database.run_through(self._insert, conversation_id, model, replica)
        return model

    async def roll_over(
        self, conversation_id: str, summary: str, carry_from_seq: int, replica: str
    ) -> ModelConversation:
        """A new summary and a new model conversation that holds only the carried messages."""
        model = ModelConversation("m_" + secrets.token_hex(8), carry_from_seq, "rollover")

        async def rolled_over(statements: Statements) -> None:
            await Summaries.replace(statements, conversation_id, summary)
            await self._insert(statements, conversation_id, model, replica)

        await self._database.run_through(rolled_over)
        return model

    async def rollovers_since(self, conversation_id: str, since: datetime) -> list[datetime]:
        """When each rollover (a fold, or one forced at twice the window) after `since` was."""
        async with self._database() as db:
            rows = await db.scalars(
                select(model_conversations.c.started_at)
                .where(model_conversations.c.conversation_id == conversation_id)
                .where(model_conversations.c.reason == "rollover")
                .where(model_conversations.c.started_at > since)
            )
            return list(rows)

    async def _insert(
        self, statements: Statements, conversation_id: str, model: ModelConversation, replica: str
    ) -> None:
        await statements.execute(
            insert(model_conversations).values(
                id=model.id,
                conversation_id=conversation_id,
                started_at=self._clock(),
                reason=model.reason,
                replica=replica,
                carry_from_seq=model.carry_from_seq,
            )
        )
