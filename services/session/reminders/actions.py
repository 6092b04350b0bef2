"""The main model's reminder tools: set, list and cancel the person's reminders and scheduled work.

Times come as the person's local date-time and a recurrence rule; code checks them and computes
every occurrence. The person is the turn's; a reminder id the model names is looked up within the
turn's conversation only. Setting and cancelling are done once per turn (`session.effects`).
"""

from __future__ import annotations

from session.conversations import Conversation
from session.effects import Effects
from session.outcomes import Outcome
from session.reminders.store import Reminder, Reminders, TooMany
from session.reminders.times import TimeRefused, schedule, wall_time
from violet.database import Session
from violet.models import JsonObject, ToolCall
from violet.models import tools as t
from violet.when import refusal


class ReminderActions:
    def __init__(self, reminders: Reminders, effects: Effects) -> None:
        self._reminders = reminders
        self._effects = effects

    async def run(self, conversation: Conversation, call: ToolCall, key: str, zone: str) -> Outcome:
        if call.name == t.SET_REMINDER:
            return await self._set(conversation, call.input, key, zone)
        if call.name == t.CANCEL_REMINDER:
            return await self._cancel(conversation, call.input, key, zone)
        listed = [_item(reminder) for reminder in await self._reminders.open(conversation.id)]
        return Outcome(t.reminders_result("reminders", listed, self._today(zone)))

    async def _set(
        self, conversation: Conversation, arguments: JsonObject, key: str, zone: str
    ) -> Outcome:
        text = " ".join(str(arguments.get("text", "")).split())
        if not text:
            return Outcome("Say what to remind of.", is_error=True)
        try:
            asked = schedule(str(arguments.get("at", "")), zone, str(arguments.get("repeat", "")))
        except TimeRefused as refused:
            return Outcome(refused.reason, is_error=True)
        outcome: Outcome | None = None

        async def record(tx: Session, reminder: Reminder) -> None:
            nonlocal outcome
            result = t.reminders_result("reminder", _item(reminder), self._today(zone))
            outcome = Outcome(result)
            await self._effects.record(tx, conversation.id, key, result)

        try:
            await self._reminders.add(
                conversation.id, text, arguments.get("work") is True, asked, also=record
            )
        except TimeRefused as refused:
            return Outcome(refused.reason, is_error=True)
        except TooMany:
            return Outcome(refusal("too_many"), is_error=True)
        assert outcome is not None
        return outcome

    async def _cancel(
        self, conversation: Conversation, arguments: JsonObject, key: str, zone: str
    ) -> Outcome:
        today = self._today(zone)
        cancelled: Outcome | None = None

        async def record(tx: Session) -> None:
            assert cancelled is not None
            await self._effects.record(tx, conversation.id, key, cancelled.content)

        found = await self._reminders.open(conversation.id)
        wanted = str(arguments.get("reminder_id", ""))
        match = next((reminder for reminder in found if reminder.id == wanted), None)
        if match is None:
            return Outcome("There is no open reminder with that id.", is_error=True)
        cancelled = Outcome(t.reminders_result("cancelled", _item(match), today))
        if await self._reminders.cancel(conversation.id, wanted, also=record) is None:
            return Outcome("There is no open reminder with that id.", is_error=True)
        return cancelled

    def _today(self, zone: str) -> str:
        return wall_time(self._reminders.now(), zone).date().isoformat()


def _item(reminder: Reminder) -> JsonObject:
    """A reminder as the tools give it: its next time on the wall clock of its zone."""
    schedule = reminder.schedule
    following = wall_time(reminder.next_at, schedule.zone) if reminder.next_at else None
    next_local = following.strftime("%Y-%m-%dT%H:%M") if following else ""
    return t.reminder_item(reminder.id, reminder.text, reminder.work, next_local, schedule.repeat)
