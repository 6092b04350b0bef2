"""Everything the session service stores about people's conversations, part by part."""

from __future__ import annotations

from dataclasses import dataclass

from session.conversations import Conversations
from session.effects import Effects
from session.model_conversations import ModelConversations
from session.pins import Pins
from session.reminders.store import Reminders
from session.summaries import Summaries
from session.transcript import Transcript
from session.updates import Updates
from violet.clock import Clock, utc_now
from violet.database import Database


@dataclass(frozen=True)
class ConversationStore:
    # Where the parts keep their rows: for reads of several parts in one trip.
    database: Database
    conversations: Conversations
    transcript: Transcript
    model_conversations: ModelConversations
    summaries: Summaries
    pins: Pins
    updates: Updates
    effects: Effects
    reminders: Reminders

    @classmethod
    def open(
        cls,
        database: Database,
        *,
        notify: bool,
        clock: Clock = utc_now,
        person_clock: Clock | None = None,
    ) -> ConversationStore:
        """`notify`: wake other replicas' streams through PostgreSQL NOTIFY; `person_clock`:
        the time of the person's reminders, when a test moves it (default `clock`)."""
        return cls(
            database=database,
            conversations=Conversations(database, clock),
            transcript=Transcript(database, notify, clock),
            model_conversations=ModelConversations(database, clock),
            summaries=Summaries(database),
            pins=Pins(database, clock),
            updates=Updates(database, clock),
            effects=Effects(database, clock),
            reminders=Reminders(database, person_clock or clock),
        )
