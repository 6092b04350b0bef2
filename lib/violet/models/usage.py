"""Each call's usage and cost, summed per person, day (UTC), kind of call, payer and model, and
handed in batches to where the totals are kept (the session service's `model_usage` table).

Calls add to the batch as they end, without waiting; `flush_forever` sends it every second, and
`aclose` sends what is left. A batch that cannot be sent is kept and sent with the next one, up
to `MAX_PENDING` rows, beyond which the oldest are dropped (counted as a fallback).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import date

from violet.clock import utc_now
from violet.fallbacks import fallback
from violet.models.base import Usage
from violet.models.credentials import Payer
from violet.models.prices import cost_usd

log = logging.getLogger(__name__)

MAX_PENDING = 10_000
FLUSH_EVERY_S = 1.0


@dataclass(frozen=True)
class UsageRow:
    day: date
    call: str
    payer: str
    model: str
    calls: int = 0
    input_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def key(self) -> tuple[date, str, str, str]:
        return (self.day, self.call, self.payer, self.model)

    def plus(self, other: UsageRow) -> UsageRow:
        return replace(
            self,
            calls=self.calls + other.calls,
            input_tokens=self.input_tokens + other.input_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
        )


def row_of(call: str, payer: Payer, usage: Usage, day: date) -> UsageRow:
    return UsageRow(
        day=day,
        call=call,
        payer=payer.value,
        model=usage.model,
        calls=1,
        input_tokens=usage.input_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        output_tokens=usage.output_tokens,
        cost_usd=cost_usd(usage) or 0.0,
    )


Send = Callable[[str, list[UsageRow]], Awaitable[None]]


class UsageBatches:
    """A `UsageSink` (`violet.models.personal`) that sends sums per person with `send`."""

    def __init__(self, send: Send, clock: Callable[[], date] = lambda: utc_now().date()) -> None:
        self._send = send
        self._today = clock
        self._pending: dict[str, dict[tuple[date, str, str, str], UsageRow]] = {}

    def add(self, person: str, call: str, payer: Payer, usage: Usage) -> None:
        self._keep(person, row_of(call, payer, usage, self._today()))

    def _keep(self, person: str, row: UsageRow) -> None:
        rows = self._pending.setdefault(person, {})
        known = rows.get(row.key)
        rows[row.key] = row if known is None else known.plus(row)

    def pending_rows(self) -> int:
        return sum(len(rows) for rows in self._pending.values())

    async def flush(self) -> None:
        batches, self._pending = self._pending, {}
        for person, rows in batches.items():
            await self._send_or_keep(person, rows)
        self._bound()

    async def settle(self, person: str) -> None:
        """Sends the person's rows now, ahead of the next batch."""
        rows = self._pending.pop(person, None)
        if rows:
            await self._send_or_keep(person, rows)

    async def _send_or_keep(
        self, person: str, rows: dict[tuple[date, str, str, str], UsageRow]
    ) -> None:
        try:
            await self._send(person, list(rows.values()))
        except Exception as error:  # noqa: BLE001 - kept, and sent with the next batch
            log.warning("usage not yet recorded: %s", error)
            for row in rows.values():
                self._keep(person, row)

    async def flush_forever(self, every_s: float = FLUSH_EVERY_S) -> None:
        while True:
            await asyncio.sleep(every_s)
            await self.flush()

    async def aclose(self) -> None:
        await self.flush()

    def _bound(self) -> None:
        over = self.pending_rows() - MAX_PENDING
        if over <= 0:
            return
        fallback("usage_dropped", f"{over} rows of usage could not be recorded in time")
        for person in list(self._pending):
            while over > 0 and self._pending[person]:
                self._pending[person].pop(next(iter(self._pending[person])))
                over -= 1
            if not self._pending[person]:
                del self._pending[person]
