"""One turn of the main session: the person's message in, Violet's answer out."""

from __future__ import annotations

import logging

from session.context import SYSTEM_PROMPT, model_messages
from session.transcript import Conversation, Message, Transcript
from violet.models import ModelClient, ModelError

log = logging.getLogger(__name__)

APOLOGY = "Sorry, I couldn't think that through just now. Could you say it again in a moment?"


class MainSession:
    def __init__(self, model: ModelClient, transcript: Transcript, window: int) -> None:
        self._model = model
        self._transcript = transcript
        self._window = window

    async def answer(self, conversation: Conversation, message: Message) -> str:
        live = await self._transcript.recent(conversation.id, self._window)
        live = [m for m in live if m.seq <= message.seq]
        try:
            reply = await self._model.reply(
                tier="main",
                system=SYSTEM_PROMPT,
                messages=model_messages(live),
                tools=[],
                person=conversation.person,
            )
        except ModelError as error:
            log.warning(
                "main model failed; the person is asked to retry", extra={"error": str(error)}
            )
            return APOLOGY
        return reply.text.strip() or APOLOGY
