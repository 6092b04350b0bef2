"""The rolling summary of everything before the live window, and the count of folds that failed
since the last one that worked."""

from __future__ import annotations

from sqlalchemy import bindparam, select, update
from sqlalchemy.engine import Connection

from session.tables import conversations
from violet.database import Database, Statements

_SUMMARY = select(conversations.c.summary).where(conversations.c.id == bindparam("conversation"))


def summary_on(connection: Connection, conversation_id: str) -> str:
    return connection.scalar(_SUMMARY, {"conversation": conversation_id}) or ""


_SUMMARY_AND_ZONE = select(conversations.c.summary, conversations.c.time_zone).where(
    conversations.c.id == bindparam("conversation")
)


def summary_and_zone_on(connection: Connection, conversation_id: str) -> tuple[str, str]:
    """The summary and the person's time zone ("" when no device said one), in one read: a
    turn needs both."""
    row = connection.execute(_SUMMARY_AND_ZONE, {"conversation": conversation_id}).first()
    return (row.summary or "", row.time_zone or "") if row is not None else ("", "")


class Summaries:
    def __init__(self, database: Database) -> None:
        self._database = database

    async def of(self, conversation_id: str) -> str:
        return await self._database.run(summary_on, conversation_id)

    @staticmethod
    async def replace(statements: Statements, conversation_id: str, summary: str) -> None:
        """The new summary, written by a fold that worked: the failures start again at zero."""
        await statements.execute(
            update(conversations)
            .where(conversations.c.id == conversation_id)
            .values(summary=summary, fold_failures=0)
        )

    async def fold_failed(self, conversation_id: str) -> int:
        """Counts a failed fold; how many failed in a row."""
        async with self._database() as tx, tx.begin():
            return int(
                await tx.scalar(
                    update(conversations)
                    .where(conversations.c.id == conversation_id)
                    .values(fold_failures=conversations.c.fold_failures + 1)
                    .returning(conversations.c.fold_failures)
                )
            )
