"""How long a person's conversation and finished work are kept, when the operator says.

`VIOLET_KEEP_TRANSCRIPT_DAYS` and `VIOLET_KEEP_WORK_DAYS` (unset: for ever). Once a day (UTC), one
replica, under a lease on the pass's row, goes over everyone with a message older than a horizon,
person by person:
- the transcript loses its messages older than the transcript's horizon, except the live window
  (what the main model holds now, which the rolling summary does not cover yet) and from the
  first message not yet answered on: a person back after months finds their last exchange;
- with those messages goes what was made of them alone: the results told in them (`updates`),
  what the tool calls of their turns did (`effects`), promises and approvals closed before the
  horizon (`pins`); memory drops its copies of those turns and what Violet told in them, and the
  router its decisions on them. Memories the person kept (the memory page) stay;
- the worker removes work finished before the work's horizon; topics and documents stay.

The rolling summary stays: it is the model's working notes, folded anew as the conversation goes
on, not a record of it. Every service's part is idempotent and the session's own rows go last, so
a pass that stops halfway is finished by the next day's.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import date, datetime, timedelta

import grpc
from opentelemetry import trace
from sqlalchemy import delete, exists, func, insert, select, update
from sqlalchemy.exc import SQLAlchemyError

from session.erasure import Removed, Standing
from session.model_conversations import ModelConversations
from session.tables import (
    conversations,
    effects,
    messages,
    owed_captures,
    pins,
    retention_passes,
    updates,
)
from violet.channels import Peers
from violet.clock import Clock, utc_now
from violet.database import Database, Session, across_people, rows_changed
from violet.identity import acting_for, service_identity
from violet.leases import Lease, LeaseColumns
from violet.person_data import Horizon
from violet.v1 import persons_pb2_grpc

log = logging.getLogger(__name__)
tracer = trace.get_tracer(__name__)

SERVICES = ("worker", "router", "memory")
DAILY = "daily"
# A daily pass needs no finer timing: each replica asks whether today's has run this often.
CHECK_EVERY_S = 600.0
_THE_PASS = retention_passes.c.name == DAILY
PASSING = LeaseColumns(retention_passes.c.name, retention_passes.c.holder, retention_passes.c.until)


@dataclass(frozen=True)
class Keeping:
    """The operator's retention: days kept, None for ever."""

    transcript_days: int | None = None
    work_days: int | None = None

    @property
    def forever(self) -> bool:
        return self.transcript_days is None and self.work_days is None

    def horizon(self, now: datetime) -> Horizon:
        """The moments before which things go (the transcript's seq is each person's own)."""
        return Horizon(
            transcript_before=_days_before(now, self.transcript_days),
            work_before=_days_before(now, self.work_days),
        )


def _days_before(now: datetime, days: int | None) -> datetime | None:
    return None if days is None else now - timedelta(days=days)


@dataclass
class PassReport:
    people: int = 0
    messages: int = 0
    rows: int = 0
    vectors: int = 0
    # People whose trim failed (a service unreachable, say): the next pass tries them again.
    failed: int = 0


@dataclass(frozen=True)
class _Gone:
    messages: int = 0
    others: int = 0


class Retention:
    def __init__(
        self,
        db: Database,
        peers: Peers,
        secret: str,
        keeping: Keeping,
        standing: Standing,
        replica: str,
        lease_s: float,
        clock: Clock = utc_now,
    ) -> None:
        self._db = db
        self._peers = peers
        self._secret = secret
        self._keeping = keeping
        self._standing = standing
        self._clock = clock
        self._passing = Lease(db, PASSING, replica, lease_s, clock)

    async def daily_forever(self, every_s: float = CHECK_EVERY_S) -> None:
        if self._keeping.forever:
            return
        while True:
            try:
                await self.run_if_due()
            except Exception:
                log.exception("the retention pass failed; it is tried again in a while")
            await asyncio.sleep(every_s)

    async def run_if_due(self) -> PassReport | None:
        """Today's pass, unless it ran or another replica runs it; its report, if it ran here."""
        today = self._clock().date()
        await self._make_row()
        if await self._done_on() == today:
            return None
        async with self._passing.holding(DAILY) as passing:
            if not passing or await self._done_on() == today:
                return None
            report = await self.run()
            await self._mark_done(today)
        return report

    async def run(self) -> PassReport:
        """The pass over everyone, now."""
        horizon = self._keeping.horizon(self._clock())
        report = PassReport()
        moments = [m for m in (horizon.transcript_before, horizon.work_before) if m is not None]
        if not moments:
            return report
        with tracer.start_as_current_span("retention.pass") as span:
            for conversation_id, person in await self._older_than(max(moments)):
                await self._trim_person(conversation_id, person, horizon, report)
            for name, value in vars(report).items():
                span.set_attribute(f"violet.retention.{name}", value)
        log.info("retention pass done", extra=vars(report))
        return report

    async def _trim_person(
        self, conversation_id: str, person: str, horizon: Horizon, report: PassReport
    ) -> None:
        with acting_for(person):
            try:
                await self._standing.check(person)
            except Removed:
                return  # being removed: the removal takes everything
            try:
                through = await self._through_seq(conversation_id, horizon.transcript_before)
                own = Horizon(through, horizon.transcript_before, horizon.work_before)
                await self._trim_services(person, own, report)
                gone = await self._trim_own(conversation_id, own)
            except (grpc.aio.AioRpcError, SQLAlchemyError) as error:
                report.failed += 1
                log.warning("retention: a person's trim failed, tried again tomorrow: %r", error)
                return
        report.people += 1
        report.messages += gone.messages
        report.rows += gone.others

    async def _trim_services(self, person: str, horizon: Horizon, report: PassReport) -> None:
        identity = service_identity(person, self._secret)
        for name in SERVICES:
            stub = self._peers.stub(name, persons_pb2_grpc.PersonDataStub)
            trimmed = await stub.Trim(horizon.request(), metadata=identity.metadata())
            report.rows += trimmed.rows
            report.vectors += trimmed.vectors

    async def _through_seq(self, conversation_id: str, before: datetime | None) -> int:
        """The newest seq the transcript lets go: older than `before`, below the live window
        and below the first message not yet answered."""
        if before is None:
            return 0
        live = await ModelConversations(self._db).current(conversation_id)
        if live is None:
            return 0
        of_it = messages.c.conversation_id == conversation_id
        async with self._db() as db:
            unanswered = await db.scalar(
                select(func.min(messages.c.seq)).where(of_it, messages.c.answered.is_(False))
            )
            bound = min(live.carry_from_seq, unanswered or live.carry_from_seq)
            through = await db.scalar(
                select(func.max(messages.c.seq)).where(
                    of_it, messages.c.seq < bound, messages.c.at < before
                )
            )
        return int(through or 0)

    async def _trim_own(self, conversation_id: str, horizon: Horizon) -> _Gone:
        """The session's rows the horizon lets go, in one transaction."""
        async with self._db() as tx, tx.begin():
            gone = await _trim_transcript(tx, conversation_id, horizon.transcript_through_seq)
            if horizon.transcript_before is None:
                return gone
            pins_closed = await _trim_closed_pins(tx, conversation_id, horizon.transcript_before)
        return _Gone(gone.messages, gone.others + pins_closed)

    async def _older_than(self, moment: datetime) -> list[tuple[str, str]]:
        older = exists().where(
            messages.c.conversation_id == conversations.c.id, messages.c.at < moment
        )
        fallback = select(conversations.c.id, conversations.c.person).where(older)
        async with self._db() as db:
            rows = await across_people(
                db, "session_conversations_older_than", fallback, moment=moment
            )
        return [(row.id, row.person) for row in rows]

    async def _make_row(self) -> None:
        async with self._db() as tx, tx.begin():
            if await tx.scalar(select(retention_passes.c.name).where(_THE_PASS)) is None:
                await tx.execute(insert(retention_passes).values(name=DAILY))

    async def _done_on(self) -> date | None:
        async with self._db() as db:
            return await db.scalar(select(retention_passes.c.done_on).where(_THE_PASS))

    async def _mark_done(self, today: date) -> None:
        async with self._db() as tx, tx.begin():
            await tx.execute(update(retention_passes).where(_THE_PASS).values(done_on=today))


async def _trim_transcript(tx: Session, conversation_id: str, through_seq: int) -> _Gone:
    """The messages up to `through_seq`, the results told in them, and the effects of their
    turns: every effect written before the first message kept."""
    if through_seq <= 0:
        return _Gone()
    first_kept = await tx.scalar(
        select(func.min(messages.c.at)).where(
            messages.c.conversation_id == conversation_id, messages.c.seq > through_seq
        )
    )
    told = await tx.execute(
        delete(updates).where(
            updates.c.conversation_id == conversation_id, updates.c.told_seq <= through_seq
        )
    )
    done = rows_changed(told)
    # Captures still owed of those messages go too: memory is trimmed of them as well.
    owed = await tx.execute(
        delete(owed_captures).where(
            owed_captures.c.conversation_id == conversation_id,
            owed_captures.c.seq <= through_seq,
        )
    )
    done += rows_changed(owed)
    if first_kept is not None:
        done += rows_changed(
            await tx.execute(
                delete(effects).where(
                    effects.c.conversation_id == conversation_id,
                    effects.c.created_at < first_kept,
                )
            )
        )
    gone = await tx.execute(
        delete(messages).where(
            messages.c.conversation_id == conversation_id, messages.c.seq <= through_seq
        )
    )
    return _Gone(messages=rows_changed(gone), others=done)


async def _trim_closed_pins(tx: Session, conversation_id: str, before: datetime) -> int:
    closed = await tx.execute(
        delete(pins).where(pins.c.conversation_id == conversation_id, pins.c.closed_at < before)
    )
    return rows_changed(closed)
