"""A lease on a row: one holder at a time on any replica (a turn of a person, a run of a work
session), recorded as a holder and an expiry on the row itself.

A lease rather than a held database lock, so it works the same on SQLite and PostgreSQL, and a
holder that dies blocks nobody past its expiry. It is renewed while held.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Column, ColumnElement, Update, bindparam, or_, update
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from violet.clock import Clock, utc_now
from violet.database import Database, rows_changed


@dataclass(frozen=True)
class LeaseColumns:
    """Where a table keeps its lease: the row's key, the holder and the expiry."""

    key: Column[Any]
    holder: Column[Any]
    until: Column[Any]

    def free(self, moment: datetime | ColumnElement[datetime]) -> ColumnElement[bool]:
        """True for rows nobody holds at `moment`."""
        return or_(self.until.is_(None), self.until < moment)


class Lease:
    """Leases on the rows of one table, all taken for the same holder."""

    def __init__(
        self,
        db: async_sessionmaker[AsyncSession] | Database,
        columns: LeaseColumns,
        holder: str,
        duration_s: float,
        clock: Clock = utc_now,
    ) -> None:
        self._db = db
        self._holder = holder
        self._duration = timedelta(seconds=duration_s)
        self._clock = clock
        # Built once, with parameters named apart from any table's columns (setting a column
        # binds a parameter of the column's own name).
        table, row = columns.key.table, columns.key == bindparam("lease_row")
        mine = columns.holder == bindparam("lease_asker")
        self._take = (
            update(table)
            .where(row, or_(columns.free(bindparam("lease_moment")), mine))
            .values(
                {columns.holder: bindparam("lease_taker"), columns.until: bindparam("lease_expiry")}
            )
        )
        self._give_back = (
            update(table).where(row, mine).values({columns.holder: None, columns.until: None})
        )
        # Renewal only extends a lease still held: one given back stays free.
        self._extend = (
            update(table).where(row, mine).values({columns.until: bindparam("lease_expiry")})
        )

    async def try_acquire(self, key: str) -> bool:
        """Takes or renews the lease on the row; False while someone else holds it."""
        return await self._change(self._take, self._taking(key)) == 1

    def try_acquire_on(self, connection: Connection, key: str) -> bool:
        """`try_acquire` as work for `Database.run`, beside other work of the same trip."""
        return rows_changed(connection.execute(self._take, self._taking(key))) == 1

    def _taking(self, key: str) -> dict[str, Any]:
        moment = self._clock()
        return {
            "lease_row": key,
            "lease_asker": self._holder,
            "lease_taker": self._holder,
            "lease_moment": moment,
            "lease_expiry": moment + self._duration,
        }

    async def release(self, key: str) -> None:
        await self._change(self._give_back, self._asking(key))

    def release_on(self, connection: Connection, key: str) -> None:
        """`release` as work for `Database.run`, beside other work of the same trip."""
        connection.execute(self._give_back, self._asking(key))

    def _asking(self, key: str) -> dict[str, Any]:
        return {"lease_row": key, "lease_asker": self._holder}

    async def _change(self, statement: Update, parameters: dict[str, Any]) -> int:
        """Runs the change in a transaction of its own: how many rows it changed."""
        if isinstance(self._db, Database):
            return rows_changed(await self._db.execute(statement, parameters))
        async with self._db() as tx, tx.begin():
            return rows_changed(await tx.execute(statement, parameters))

    @contextlib.asynccontextmanager
    async def held(self, key: str) -> AsyncIterator[Holding]:
        """Holds an acquired lease, renewing it until the block ends, then gives it back
        unless the block's own work did (`Holding`)."""
        holding = Holding()
        renewal = asyncio.create_task(self._renew(key))
        try:
            yield holding
        finally:
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal
            if not holding.given_back:
                # Even a cancelled holder hands the lease back, so nobody waits out its expiry.
                await asyncio.shield(self.release(key))

    @contextlib.asynccontextmanager
    async def holding(self, key: str) -> AsyncIterator[bool]:
        """Takes the lease for the block if it is free: True inside when it was taken."""
        if not await self.try_acquire(key):
            yield False
            return
        async with self.held(key):
            yield True

    async def _renew(self, key: str) -> None:
        while True:
            await asyncio.sleep(self._duration.total_seconds() / 3)
            extending = {**self._asking(key), "lease_expiry": self._clock() + self._duration}
            await self._change(self._extend, extending)


@dataclass
class Holding:
    """A lease held by a `Lease.held` block. Work inside the block may give the lease back in
    its own trip (`Lease.release_on`), saving the block's last trip: once that trip has
    committed, the work sets `given_back` and the block ends without giving it back again.
    A renewal that comes after changes nothing, as renewal only extends a lease still held."""

    given_back: bool = False
