"""What a turn reads of the conversation, read once at its start and handed to each part of the
turn (the answer, then the fold), so no part reads the same rows again."""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlalchemy.engine import Connection

from session.conversations import Conversation
from session.model_conversations import ModelConversation, current_on
from session.pins import Pin, open_on
from session.store import ConversationStore
from session.summaries import summary_and_zone_on
from session.transcript import LIVE_LIMIT, Message, since_on
from violet.identity import Identity
from violet.language import detect


@dataclass(frozen=True)
class TurnContext:
    conversation: Conversation
    identity: Identity
    model_conversation: ModelConversation
    live: list[Message]  # what the model conversation holds, oldest first
    summary: str  # everything before `live`
    pins: list[Pin]  # the open pins as the turn began
    zone: str = ""  # the person's time zone as their device said it; "": the default

    def after(self, stored: Message) -> TurnContext:
        """The context once the turn's own message is stored, for the fold that follows it.
        Nothing else joins the live messages meanwhile: the turn holds the conversation's lock,
        and the fold runs only when no message of the person waits."""
        return replace(self, live=[*self.live, stored])


def person_language(messages: list[Message]) -> str:
    """The language the person writes in, from their own messages among `messages`."""
    return detect([m.text for m in messages if m.author == "you"])


@dataclass(frozen=True)
class TurnReads:
    """What a turn reads of the conversation at its start, in one trip to the database."""

    # The model conversation turns go to now; None before the first message's turn.
    current: ModelConversation | None
    live: list[Message]
    summary: str
    pins: list[Pin]
    zone: str

    def context(
        self, conversation: Conversation, identity: Identity, model: ModelConversation
    ) -> TurnContext:
        return TurnContext(
            conversation, identity, model, self.live, self.summary, self.pins, self.zone
        )


def turn_reads_on(connection: Connection, conversation_id: str) -> TurnReads:
    current = current_on(connection, conversation_id)
    carried = current.carry_from_seq if current is not None else 1
    live = since_on(connection, conversation_id, carried - 1, LIVE_LIMIT)
    summary, zone = summary_and_zone_on(connection, conversation_id)
    return TurnReads(current, live, summary, open_on(connection, conversation_id), zone)


async def load_turn_context(
    store: ConversationStore, conversation: Conversation, identity: Identity
) -> TurnContext:
    """The context of a turn in a conversation that has a model conversation already."""
    read = await store.database.run(turn_reads_on, conversation.id)
    if read.current is None:
        raise LookupError(f"conversation {conversation.id} has no model conversation yet")
    return read.context(conversation, identity, read.current)
