"""The person's reminders as their page and `violet chat` show them: each with a handle, its
words, and when it comes in their language and local time; cancelled by its handle.

A handle is a digest of the reminder's row id, not the id: no internal id reaches a device. The
handle named in a cancel is found among the person's own open reminders (at most 100)."""

from __future__ import annotations

import hashlib

from session.conversations import Conversations
from session.reminders.store import Reminder, Reminders
from session.reminders.times import wall_time
from session.summaries import summary_and_zone_on
from violet import when
from violet.clock import timestamp
from violet.v1 import persons_pb2
from violet.zones import is_zone

HANDLE_CHARS = 16


class ReminderPage:
    def __init__(self, reminders: Reminders, conversations: Conversations, zone: str) -> None:
        """`zone`: the time zone of a person whose device never said theirs."""
        self._reminders = reminders
        self._conversations = conversations
        self._zone = zone

    async def listed(self, person: str, language: str) -> persons_pb2.RemindersReply:
        conversation = await self._conversations.found(person)
        if conversation is None:
            return persons_pb2.RemindersReply()
        zone = await self._zone_of(conversation.id)
        found = await self._reminders.open(conversation.id)
        return persons_pb2.RemindersReply(
            reminders=[self._shown(reminder, zone, language) for reminder in found]
        )

    async def cancel(self, person: str, handle: str) -> bool:
        """Whether one of the person's open reminders had that handle (it is cancelled)."""
        conversation = await self._conversations.found(person)
        if conversation is None:
            return False
        found = await self._reminders.open(conversation.id)
        meant = next((reminder for reminder in found if handle_of(reminder.id) == handle), None)
        if meant is None:
            return False
        return await self._reminders.cancel(conversation.id, meant.id) is not None

    def _shown(self, reminder: Reminder, zone: str, language: str) -> persons_pb2.Reminder:
        assert reminder.next_at is not None  # open reminders have a next time
        following = wall_time(reminder.next_at, zone).replace(tzinfo=None)
        today = wall_time(self._reminders.now(), zone).date()
        repeat = reminder.schedule.repeat
        said = (
            when.recurrence(repeat, following, today, language)
            if repeat
            else when.occurrence(following, today, language)
        )
        return persons_pb2.Reminder(
            reminder=handle_of(reminder.id),
            text=reminder.text,
            when=said,
            next=timestamp(reminder.next_at),
            work=reminder.work,
        )

    async def _zone_of(self, conversation_id: str) -> str:
        _, zone = await self._reminders.database.run(summary_and_zone_on, conversation_id)
        return zone if is_zone(zone) else self._zone


def handle_of(reminder_id: str) -> str:
    return hashlib.sha256(f"violet reminder {reminder_id}".encode()).hexdigest()[:HANDLE_CHARS]
