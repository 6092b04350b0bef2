"""One turn of the main session: recall, context, the main model and its tools, the answer."""

from __future__ import annotations

import logging

from opentelemetry import trace

from session.actions import MainActions
from session.context import as_said, model_messages, system_prompt
from session.effects import CallKeys
from session.peers import MemoryClient
from session.pins import Pins
from session.transcript import Conversation, Message, Transcript
from session.updates import Update
from session.window import Window
from violet.identity import Identity
from violet.metrics import ERRORS
from violet.models import ModelClient, ModelError, Reply
from violet.models.tools import MAIN_TOOLS, UPDATE_PREFIX

log = logging.getLogger(__name__)

APOLOGY = "Sorry, I couldn't think that through just now. Could you say it again in a moment?"
# Rounds of tool calls in one turn before Violet must answer in words.
MAX_TOOL_ROUNDS = 4


class MainSession:
    def __init__(
        self,
        model: ModelClient,
        transcript: Transcript,
        pins: Pins,
        memory: MemoryClient,
        actions: MainActions,
        window: Window,
    ) -> None:
        self._model = model
        self._transcript = transcript
        self._pins = pins
        self._memory = memory
        self._actions = actions
        self._window = window

    async def answer(self, conversation: Conversation, identity: Identity, message: Message) -> str:
        live = as_said(await self._transcript.live(conversation.id), upto=message.seq)
        keys = CallKeys(f"say:{message.seq}")
        return await self._respond(conversation, identity, message.text, live, [], keys)

    async def tell(self, conversation: Conversation, identity: Identity, update: Update) -> str:
        """Violet's own words for a work update: a result, or a question waiting for a yes."""
        if update.kind == "result":
            await self._pins.close_ref(conversation.id, "work", update.topic)
            await self._pins.close_ref(conversation.id, "promise", update.topic)
        elif not await self._pinned(conversation, update):
            await self._pins.add(conversation.id, "approval", update.text, ref=update.approval_ref)
        live = as_said(await self._transcript.live(conversation.id))
        note = {"role": "user", "content": UPDATE_PREFIX + update.text}
        keys = CallKeys(f"update:{update.id}")
        return await self._respond(conversation, identity, update.text, live, [note], keys)

    async def _pinned(self, conversation: Conversation, update: Update) -> bool:
        """Whether the approval is pinned already: by this telling, run before a crash."""
        waiting = await self._pins.open(conversation.id, "approval")
        return any(pin.ref == update.approval_ref for pin in waiting)

    async def _respond(
        self,
        conversation: Conversation,
        identity: Identity,
        query: str,
        live: list[Message],
        extra: list[dict],
        keys: CallKeys,
    ) -> str:
        remembered = await self._memory.recall(identity, query)
        open_pins = await self._pins.open(conversation.id)
        system = system_prompt(
            await self._transcript.summary_of(conversation.id), remembered, open_pins
        )
        visible = self._window.visible(live)
        span = trace.get_current_span()
        span.set_attribute("violet.turn.window", self._window.size)
        span.set_attribute("violet.turn.live_messages", len(live))
        span.set_attribute("violet.turn.visible_messages", len(visible))
        span.set_attribute("violet.turn.pinned_items", len(open_pins))
        span.set_attribute("violet.turn.memory_items", len(remembered))
        messages = _join(model_messages(visible), extra)
        try:
            return await self._converse(conversation, identity, system, messages, keys)
        except ModelError as error:
            ERRORS.add(1, {"violet.error.where": "main model"})
            log.warning(
                "main model failed; the person is asked to retry", extra={"error": str(error)}
            )
            return APOLOGY

    async def _converse(
        self,
        conversation: Conversation,
        identity: Identity,
        system: str,
        messages: list[dict],
        keys: CallKeys,
    ) -> str:
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
        text = reply.text.strip() if reply else ""
        return text or APOLOGY


def _join(messages: list[dict], extra: list[dict]) -> list[dict]:
    """Adds turns after the window, merging into its last turn when the roles match."""
    joined = [dict(m) for m in messages]
    for turn in extra:
        if joined and joined[-1]["role"] == turn["role"]:
            joined[-1]["content"] = f"{joined[-1]['content']}\n\n{turn['content']}"
        else:
            joined.append(dict(turn))
    return joined
