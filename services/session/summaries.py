"""The rolling summary of everything before the live window, and the count of folds that failed
since the last one that worked."""

from __future__ import annotations

from sqlalchemy import select, update

from session.tables import conversations
from violet.database import Database, Session


class Summaries:
    def __init__(self, database: Database) -> None:
        self._database = database

    async def of(self, conversation_id: str) -> str:
        async with self._database() as db:
            return (
                await db.scalar(
                    select(conversations.c.summary).where(conversations.c.id == conversation_id)
                )
                or ""
            )

    @staticmethod
    async def replace(tx: Session, conversation_id: str, summary: str) -> None:
        """The new summary, written by a fold that worked: the failures start again at zero."""
        await tx.execute(
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
