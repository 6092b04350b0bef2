"""Fires reminders at their time: a loop on every session replica looks for occurrences due,
fires each once (`Reminders.fire`), has the turn runner tell a reminder like any update, and
hands scheduled work to the worker.

Scheduled work is started after its firing has committed, under a key naming the reminder and
the occurrence, so a start that a crash cut short is made again by the next look and the worker
starts nothing twice. What this replica could not start (the worker away) waits for the next look.
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import datetime

from opentelemetry import trace

from session.actions import WorkNotStarted, WorkStarter
from session.conversations import Conversation
from session.pins import Pin, Pins
from session.reminders.store import Due, Reminder, Reminders
from session.runner import TurnRunner
from violet.database import Session
from violet.identity import acting_for, service_identity
from violet.metrics import ERRORS, REMINDER_DELAY_SECONDS, REMINDERS_FIRED

log = logging.getLogger(__name__)
tracer = trace.get_tracer(__name__)

# Reminders looked at per look; more due than this are fired on the next look at once.
BATCH = 200


class Firing:
    def __init__(
        self,
        reminders: Reminders,
        runner: TurnRunner,
        pins: Pins,
        work: WorkStarter,
        secret: str,
    ) -> None:
        self._reminders = reminders
        self._runner = runner
        self._pins = pins
        self._work = work
        self._secret = secret

    async def forever(self, every_s: float) -> None:
        while True:
            try:
                full = await self.once() >= BATCH
            except Exception:
                ERRORS.add(1, {"violet.error.where": "reminders"})
                log.exception("firing reminders failed; the next look tries again")
                full = False
            if not full:
                await asyncio.sleep(every_s)

    async def once(self) -> int:
        """Fires what is due now; how many reminders were looked at."""
        due = await self._reminders.due(BATCH)
        for reminder in due:
            with acting_for(reminder.person):
                await self._fire(reminder)
        return len(due)

    async def _fire(self, due: Due) -> None:
        conversation = Conversation(due.conversation_id, due.person)
        fired = await self._reminders.fire(due)
        if fired.told:
            REMINDERS_FIRED.add(1, {"violet.reminder.kind": "reminder"})
            self._runner.schedule(conversation)
        if fired.work is not None:
            await self._start(conversation, *fired.work)

    async def _start(self, conversation: Conversation, reminder: Reminder, due: datetime) -> None:
        with tracer.start_as_current_span("scheduled work") as span:
            identity = service_identity(conversation.person, self._secret)
            key = f"{conversation.id}/reminder/{reminder.id}/{due.isoformat()}"
            try:
                topic = await self._work.start(identity, reminder.text, key)
            except WorkNotStarted as error:
                span.set_attribute("violet.reminder.waiting", str(error))
                return  # owed still: the next look tries again

            async def started(tx: Session, _: Pin) -> None:
                await self._reminders.work_started_on(tx, reminder.id, due)

            await self._pins.add(conversation.id, "work", reminder.text, ref=topic, also=started)
            REMINDERS_FIRED.add(1, {"violet.reminder.kind": "work"})
            delay = time.time() - due.timestamp()
            REMINDER_DELAY_SECONDS.record(max(delay, 0.0), {"violet.reminder.kind": "work"})
