"""The fold: older live messages go into the rolling summary, the rest into a new model
conversation. Runs after the answer is delivered, once the live messages reach the window; a
failure is retried after the next turn, and at 2 x window the rollover happens anyway, keeping
the previous summary.

The fold waits for memory: it folds no message whose capture memory has not acknowledged
(`session.capture`), so what leaves the model's view is already in memory. The turn runner lets
the captures under way finish first (they take milliseconds); while one is still owed (memory
is away) the fold is put off, as a failed one is, to the next turn; at 2 x window the rollover
happens anyway (the model's view stays bounded), counted as a fallback, and the capture stays
owed until memory has it.

The fold also reviews the open promises: the ones the conversation shows kept are closed, and
after every rollover each overdue one (see `pins.overdue`) becomes a question Violet asks the
person, stored as an update before its pin closes, so a crash in between asks again rather than
drops it.
"""

from __future__ import annotations

from dataclasses import dataclass

from session.capture.owed import oldest_owed_seq_on
from session.conversations import Conversation
from session.pins import check_in, overdue
from session.store import ConversationStore
from session.turn_context import TurnContext, person_language
from session.window import Window
from violet.fallbacks import fallback
from violet.models import ModelClient, ModelError
from violet.models import fold as fold_call


@dataclass(frozen=True)
class FoldResult:
    folded: bool
    forced: bool = False
    failed: bool = False
    asked: int = 0  # overdue promises turned into questions for the person
    # Put off: a message it would fold still waits for memory to take its capture.
    waited_for_capture: bool = False


class Fold:
    def __init__(
        self, model: ModelClient, store: ConversationStore, window: Window, replica: str
    ) -> None:
        self._model = model
        self._store = store
        self._window = window
        self._replica = replica

    def due(self, context: TurnContext, roll_over: bool = False) -> bool:
        """Whether `after_turn` would fold: the window is full, or the turn asked to roll over
        (the conversation no longer fitted the model's context)."""
        return roll_over or self._window.fold_due(len(context.live))

    async def after_turn(self, context: TurnContext, roll_over: bool = False) -> FoldResult:
        """Folds when it is `due` (with `roll_over`, the conversation rolls over even if the
        fold fails)."""
        if not self.due(context, roll_over):
            return FoldResult(folded=False)
        conversation, live = context.conversation, context.live
        older, carried = self._window.split(live)
        forced = roll_over or self._window.rollover_forced(len(live))
        owed = await self._store.database.run(oldest_owed_seq_on, conversation.id)
        if older and owed is not None and owed <= older[-1].seq:
            if not forced:
                return FoldResult(folded=False, waited_for_capture=True)
            fallback("fold_before_capture", f"the capture of seq {owed} is still owed", seq=owed)
        language = person_language(live)
        carry_from = carried[0].seq if carried else live[-1].seq + 1
        promises = await self._store.pins.open(conversation.id, "promise")
        try:
            result = await fold_call(
                self._model,
                previous_summary=context.summary,
                lines=[("person" if m.author == "you" else "violet", m.text) for m in older],
                open_promises=[pin.text for pin in promises],
                person=conversation.person,
            )
        except ModelError as error:
            failures = await self._store.summaries.fold_failed(conversation.id)
            fallback("fold_kept_summary", str(error), failures=failures)
            if not forced:
                return FoldResult(folded=False, failed=True)
            await self._roll_over(conversation, context.summary, carry_from)
            return FoldResult(
                folded=False,
                forced=True,
                failed=True,
                asked=await self._ask(conversation, language),
            )
        kept = set(result.kept)
        kept_ids = [pin.id for pin in promises if pin.text in kept]
        await self._store.pins.close(conversation.id, kept_ids)
        await self._roll_over(conversation, result.summary, carry_from)
        return FoldResult(folded=True, asked=await self._ask(conversation, language))

    async def _roll_over(self, conversation: Conversation, summary: str, carry_from: int) -> None:
        await self._store.model_conversations.roll_over(
            conversation.id, summary, carry_from, self._replica
        )

    async def _ask(self, conversation: Conversation, language: str) -> int:
        """Turns each overdue promise into a question for the person, in their `language`; how
        many there were."""
        pins = self._store.pins
        open_pins = await pins.open(conversation.id)
        promises = [pin for pin in open_pins if pin.kind == "promise"]
        if not promises:
            return 0
        oldest = min(pin.created_at for pin in promises)
        folds = await self._store.model_conversations.rollovers_since(conversation.id, oldest)
        due = overdue(open_pins, folds)
        for pin in due:
            await self._store.updates.store(
                conversation.id,
                f"check-in:{pin.id}",
                pin.id,
                "check_in",
                check_in(pin, language),
            )
            await pins.close(conversation.id, [pin.id])
        return len(due)
