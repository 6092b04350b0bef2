"""Delivers owed captures to memory (`session.capture.owed`): at least once, in order per
conversation, with backoff, on whichever replica holds them.

A capture leased as it was written goes at once, after its turn's words are stored: the fast
path, which costs the turn one more trip (the capture deleted, and what is owed after it read).
Whatever else is owed (memory was away, or this replica stopped) is found by the sweep once
due, on any replica. A failed capture waits, with the rest of its conversation behind it, from a
second after the first failure to 30 s at most, so a memory away for minutes is tried twice a
minute per conversation and gets everything as soon as it is back. A capture memory refuses for
its content would be refused again: it is dropped, counted as a fallback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

import grpc
from opentelemetry import trace
from sqlalchemy.engine import Connection

from session.capture.owed import Bounds, Capture, Owed, OwedCaptures
from session.conversations import Conversation
from session.memory_client import CaptureFailed, MemoryClient
from violet.clock import utc_now
from violet.fallbacks import fallback
from violet.identity import acting_for, service_identity
from violet.metrics import CAPTURE_RETRIES
from violet.tasks import end_within
from violet.telemetry import context_from

log = logging.getLogger(__name__)
tracer = trace.get_tracer(__name__)

FIRST_RETRY_S = 1.0
LAST_RETRY_S = 30.0
# Conversations the sweep sends at once: a memory back after minutes gets them a few at a time.
SWEEP_CONVERSATIONS_AT_ONCE = 16
# Memory refused the capture's content: sending it again cannot help.
REFUSED_FOR_GOOD = frozenset({grpc.StatusCode.INVALID_ARGUMENT})
# A removal waits for captures under way on other replicas this often.
HELD_POLL_S = 0.1


def backoff(attempts: int) -> timedelta:
    """How long a capture that failed `attempts` times before waits after this failure."""
    return timedelta(seconds=min(FIRST_RETRY_S * 2**attempts, LAST_RETRY_S))


class CaptureSender:
    def __init__(
        self, owed: OwedCaptures, memory: MemoryClient, secret: str, bounds: Bounds
    ) -> None:
        self._owed = owed
        self._memory = memory
        self._secret = secret
        self._bounds = bounds
        # One drain per conversation on this replica, and what was leased here meanwhile.
        self._drains: dict[str, asyncio.Task[None]] = {}
        self._leased: dict[str, list[Owed]] = {}
        self._sweeping = asyncio.Semaphore(SWEEP_CONVERSATIONS_AT_ONCE)
        self._stopping = False

    def owe_on(
        self,
        connection: Connection,
        conversation: Conversation,
        capture: Capture,
        answered_at: datetime,
    ) -> Owed | None:
        """What the trip that stores a turn's words also does: owes its capture (`OwedCaptures.
        owe_on`). Once that trip has committed, `send` what it returns."""
        return self._owed.owe_on(
            connection, conversation.id, conversation.person, capture, answered_at
        )

    def send(self, owed: Owed | None) -> None:
        """After the trip that wrote the capture has committed: sends it now when it was leased
        here (None: it waits behind others, which whoever holds them sends first)."""
        if owed is None or self._stopping:
            return
        self._leased.setdefault(owed.conversation_id, []).append(owed)
        if owed.conversation_id not in self._drains:
            self._start(owed.conversation_id, None)

    def _start(self, conversation_id: str, room: asyncio.Semaphore | None) -> None:
        task = asyncio.create_task(self._drain(conversation_id, room))
        self._drains[conversation_id] = task

    async def _drain(self, conversation_id: str, room: asyncio.Semaphore | None) -> None:
        try:
            while leased := self._leased.pop(conversation_id, []):
                await self._deliver(leased)
        except Exception:
            log.exception("captures could not be sent; they are tried again later")
        finally:
            del self._drains[conversation_id]
            if room is not None:
                room.release()

    async def _deliver(self, leased: Sequence[Owed]) -> None:
        """Sends the conversation's leased captures in order, and those owed after them."""
        rows = list(leased)
        with acting_for(rows[0].person):
            while rows:
                if self._stopping:
                    await self._owed.let_go(rows)
                    return
                head = rows[0]
                try:
                    await self._send_one(head)
                except CaptureFailed as failure:
                    if failure.code not in REFUSED_FOR_GOOD:
                        await self._owed.again(rows, backoff(head.attempts))
                        return
                    fallback("capture_refused", str(failure), seq=head.seq)  # deleted as done
                rows = await self._owed.done_then_next(head)
                self._forget_leased(head.conversation_id, rows)

    def _forget_leased(self, conversation_id: str, rows: Sequence[Owed]) -> None:
        """What was leased here meanwhile and is among `rows` goes with them, not twice."""
        taking = {row.id for row in rows}
        left = [row for row in self._leased.get(conversation_id, []) if row.id not in taking]
        if left:
            self._leased[conversation_id] = left
        else:
            self._leased.pop(conversation_id, None)

    async def _send_one(self, owed: Owed) -> None:
        context = context_from(owed.trace_context)
        with tracer.start_as_current_span("capture", context=context) as span:
            owed_s = (utc_now() - owed.answered_at).total_seconds()
            span.set_attribute("violet.capture.attempts", owed.attempts)
            span.set_attribute("violet.capture.owed_ms", round(max(0.0, owed_s) * 1000, 1))
            identity = service_identity(owed.person, self._secret)
            try:
                await self._memory.capture(identity, owed.capture, owed.answered_at)
            except CaptureFailed as failure:
                span.set_attribute("violet.capture.error", failure.code.name)
                CAPTURE_RETRIES.add(1, {"violet.capture.error": failure.code.name})
                log.warning(
                    "a capture was not taken; it is sent again later",
                    extra={"code": failure.code.name, "attempts": owed.attempts + 1},
                )
                raise

    async def sweep_forever(self, every_s: float) -> None:
        while True:
            try:
                await self.sweep()
            except Exception:
                log.exception("the sweep for owed captures failed")
            await asyncio.sleep(every_s)

    async def sweep(self) -> int:
        """Keeps what is owed within its bounds, then starts sending every conversation's
        captures that are due and held by no one; how many conversations it started."""
        found = await self._owed.conversations()
        dropped = await self._owed.bound(found, self._bounds)
        for person, count in dropped.by_person.items():
            with acting_for(person):
                fallback(
                    "capture_dropped",
                    f"{count} captures owed past the bounds ({self._bounds}) were dropped",
                    count=count,
                )
        now = utc_now()
        started = 0
        for conversation in found:
            if self._stopping:
                break
            held = conversation.held_until is not None and conversation.held_until >= now
            if conversation.due_at > now or held or conversation.id in self._drains:
                continue
            await self._sweeping.acquire()
            try:
                leased = await self._owed.take(conversation.id, conversation.person)
            except BaseException:
                self._sweeping.release()
                raise
            if not leased or conversation.id in self._drains:
                self._sweeping.release()
                continue
            self._leased[conversation.id] = leased
            self._start(conversation.id, self._sweeping)
            started += 1
        return started

    async def sent_here(self, conversation_id: str, within_s: float | None = None) -> None:
        """Returns once this replica sends nothing more of the conversation's captures (sent,
        or waiting out a backoff), or after `within_s`."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(within_s):
                while (under_way := self._drains.get(conversation_id)) is not None:
                    await asyncio.wait({under_way})

    async def settled(self, conversation_id: str, person: str) -> None:
        """Returns once no capture of the conversation is on its way, from any replica: for a
        removal of the person, which stops new ones from being taken before it waits."""
        await self.sent_here(conversation_id)
        while True:  # another replica's: polled, as nothing here learns when it ends
            if not await self._owed.held(conversation_id, person):
                return
            await asyncio.sleep(HELD_POLL_S)

    async def stop(self, grace_s: float) -> None:
        """Lets the captures under way be sent for up to `grace_s`; the rest stay owed."""
        self._stopping = True
        await end_within(list(self._drains.values()), grace_s)
