"""One turn of the main session: recall, context, the main model and its tools, the answer."""

from __future__ import annotations

import logging

from opentelemetry import trace

from session.actions import MainActions
from session.context import as_said, main_prompt
from session.conversations import Conversation
from session.effects import CallKeys
from session.memory_client import MemoryClient, RecallMissed
from session.pins import Pins, pinned
from session.transcript import Message
from session.turn_context import TurnContext, person_language
from session.updates import Update
from session.window import Window
from violet.identity import Identity
from violet.language import phrase
from violet.metrics import ERRORS
from violet.models import ModelClient, ModelError, ModelMessage, Reply, TextBlock
from violet.models.tools import MAIN_TOOLS

log = logging.getLogger(__name__)

APOLOGY = {
    "en": "Sorry, I couldn't think that through just now. Could you say it again in a moment?",
    "pt": "Desculpe, não consegui pensar nisso agora. Pode repetir daqui a pouco?",
    "es": "Perdona, no he podido pensarlo ahora. ¿Puedes repetirlo en un momento?",
    "fr": "Désolée, je n'ai pas pu y réfléchir. Pouvez-vous le redire dans un instant ?",
    "de": "Entschuldigung, das ging gerade nicht. Sagen Sie es bitte gleich noch einmal?",
}
# Rounds of tool calls in one turn before Violet must answer in words.
MAX_TOOL_ROUNDS = 4


class MainSession:
    def __init__(
        self,
        model: ModelClient,
        pins: Pins,
        memory: MemoryClient,
        actions: MainActions,
        window: Window,
    ) -> None:
        self._model = model
        self._pins = pins
        self._memory = memory
        self._actions = actions
        self._window = window

    async def answer(self, context: TurnContext, message: Message) -> str:
        live = as_said(context.live, upto=message.seq)
        keys = CallKeys(f"say:{message.seq}")
        return await self._respond(context, message.text, live, keys)

    async def tell(self, context: TurnContext, update: Update) -> str:
        """Violet's own words for an update: a work result, a question waiting for a yes, or
        her question about a promise that waited too long."""
        conversation = context.conversation
        if update.kind == "result":
            await self._pins.close_ref(conversation.id, "work", update.topic)
            await self._pins.close_ref(conversation.id, "promise", update.topic)
        elif update.kind == "approval" and not await self._pinned(conversation, update):
            await self._pins.add(conversation.id, "approval", update.text, ref=update.approval_ref)
        live = as_said(context.live)
        keys = CallKeys(f"update:{update.id}")
        return await self._respond(context, update.text, live, keys, update.text)

    async def _pinned(self, conversation: Conversation, update: Update) -> bool:
        """Whether the approval is pinned already: by this telling, run before a crash."""
        waiting = await self._pins.open(conversation.id, "approval")
        return any(pin.ref == update.approval_ref for pin in waiting)

    async def _respond(
        self,
        context: TurnContext,
        query: str,
        live: list[Message],
        keys: CallKeys,
        update: str = "",
    ) -> str:
        conversation, identity = context.conversation, context.identity
        remembered, checked = await self._recall(identity, query)
        open_pins = await self._pins.open(conversation.id)
        shown = pinned(open_pins)
        visible = self._window.visible(live)
        system, messages = main_prompt(
            context.summary,
            shown,
            visible,
            update=update,
            remembered=remembered,
            memory_checked=checked,
        )
        span = trace.get_current_span()
        span.set_attribute("violet.turn.window", self._window.size)
        span.set_attribute("violet.turn.live_messages", len(live))
        span.set_attribute("violet.turn.visible_messages", len(visible))
        span.set_attribute("violet.turn.pinned_items", len(shown))
        span.set_attribute("violet.turn.open_items", len(open_pins))
        span.set_attribute("violet.turn.memory_items", len(remembered))
        span.set_attribute("violet.turn.memory_checked", checked)
        try:
            answer = await self._converse(conversation, identity, system, messages, keys)
        except ModelError as error:
            ERRORS.add(1, {"violet.error.where": "main model"})
            log.warning(
                "main model failed; the person is asked to retry", extra={"error": str(error)}
            )
            answer = ""
        return answer or phrase(APOLOGY, person_language(live))

    async def _recall(self, identity: Identity, query: str) -> tuple[list[str], bool]:
        """What memory holds for the query, and whether memory could be checked at all: a
        miss is told to the model, so it never takes it for nothing remembered."""
        try:
            return await self._memory.recall(identity, query), True
        except RecallMissed:
            return [], False

    async def _converse(
        self,
        conversation: Conversation,
        identity: Identity,
        system: list[TextBlock],
        messages: list[ModelMessage],
        keys: CallKeys,
    ) -> str:
        """The model's answer in words; empty when it gave none."""
        reply: Reply | None = None
        for round_number in range(MAX_TOOL_ROUNDS + 1):
            tools = MAIN_TOOLS if round_number < MAX_TOOL_ROUNDS else ()
            reply = await self._model.reply(
                tier="main",
                system=system,
                messages=messages,
                tools=tools,
                person=conversation.person,
            )
            if not reply.tool_calls:
                break
            results = await self._actions.run_all(conversation, identity, reply.tool_calls, keys)
            messages = [
                *messages,
                {"role": "assistant", "content": reply.content},
                {"role": "user", "content": results},
            ]
        return reply.text.strip() if reply else ""
