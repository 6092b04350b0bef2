"""What a turn reads of the conversation, read once at its start and handed to each part of the
turn (the answer, then the fold), so no part reads the same rows again."""

from __future__ import annotations

from dataclasses import dataclass, replace

from session.conversations import Conversation
from session.model_conversations import ModelConversation
from session.store import ConversationStore
from session.transcript import Message
from violet.identity import Identity
from violet.language import detect


@dataclass(frozen=True)
class TurnContext:
    conversation: Conversation
    identity: Identity
    model_conversation: ModelConversation
    live: list[Message]  # what the model conversation holds, oldest first
    summary: str  # everything before `live`

    def after(self, stored: Message) -> TurnContext:
        """The context once the turn's own message is stored, for the fold that follows it.
        Nothing else joins the live messages meanwhile: the turn holds the conversation's lock,
        and the fold runs only when no message of the person waits."""
        return replace(self, live=[*self.live, stored])


def person_language(messages: list[Message]) -> str:
    """The language the person writes in, from their own messages among `messages`."""
    return detect([m.text for m in messages if m.author == "you"])


async def load_turn_context(
    store: ConversationStore,
    conversation: Conversation,
    identity: Identity,
    model_conversation: ModelConversation,
) -> TurnContext:
    live = await store.transcript.live(conversation.id, model_conversation)
    summary = await store.summaries.of(conversation.id)
    return TurnContext(conversation, identity, model_conversation, live, summary)
