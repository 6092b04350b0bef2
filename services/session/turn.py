"""One turn of the main session: recall, context, the main model and its tools, the answer."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from opentelemetry import trace

from session.account_phrases import SPEND_LIMIT, held_phrase
from session.accounts import Accounts
from session.actions import MainActions
from session.activity import Activity
from session.context import as_said, main_prompt
from session.conversations import Conversation
from session.effects import CallKeys
from session.memory_client import MemoryClient, RecallMissed, Recollection
from session.pins import Pin, Pins, pinned
from session.plain_words import in_plain_words
from session.reminders.words import reminder_words
from session.transcript import Message
from session.turn_context import TurnContext, person_language
from session.updates import Update
from session.window import Window
from violet.clock import Clock, utc_now
from violet.fallbacks import fallback
from violet.identity import Identity
from violet.language import phrase
from violet.metrics import ERRORS, REMINDER_DELAY_SECONDS
from violet.models import (
    ModelClient,
    ModelContextFull,
    ModelError,
    ModelMessage,
    ModelRefused,
    Reply,
    SpendLimitReached,
    TextBlock,
)
from violet.models.credentials import CallsHeld
from violet.models.tools import MAIN_TOOLS
from violet.zones import UTC_NAME, is_zone, local_moment, spoken

APOLOGY = {
    "en": "Sorry, I couldn't think that through just now. Could you say it again in a moment?",
    "pt": "Desculpe, não consegui pensar nisso agora. Pode repetir daqui a pouco?",
    "es": "Perdona, no he podido pensarlo ahora. ¿Puedes repetirlo en un momento?",
    "fr": "Désolée, je n'ai pas pu y réfléchir. Pouvez-vous le redire dans un instant ?",
    "de": "Entschuldigung, das ging gerade nicht. Sagen Sie es bitte gleich noch einmal?",
    "it": "Scusa, non sono riuscita a pensarci bene proprio ora. Puoi ripetermelo tra un momento?",
    "nl": "Sorry, ik kon er nu even niet goed over nadenken. Kun je het zo nog eens zeggen?",
    "pl": "Przepraszam, nie udało mi się teraz tego przemyśleć. Możesz za chwilę napisać to "
    "jeszcze raz?",
    "tr": "Kusura bakmayın, bunu şu anda düşünüp toparlayamadım. Birazdan tekrar söyleyebilir "
    "misiniz?",
    "id": "Maaf, saya belum bisa memikirkannya sekarang. Bisa Anda ulangi sebentar lagi?",
    "vi": "Xin lỗi, lúc này mình chưa suy nghĩ kỹ được. Lát nữa bạn nói lại giúp mình nhé?",
    "ru": "Простите, сейчас у меня не получилось это обдумать. Можете повторить чуть позже?",
    "ar": "عذرًا، لم أتمكن من التفكير في ذلك الآن. هل يمكنك إعادته بعد قليل؟",
    "hi": "माफ़ कीजिए, मैं अभी इस पर ठीक से सोच नहीं पाई। कृपया थोड़ी देर में इसे फिर से कहें।",
    "zh": "抱歉，我刚才没能想清楚。你过一会儿再说一遍好吗？",
    "ja": "すみません、今はうまく考えられませんでした。少ししてから、"
    "もう一度言っていただけますか？",
    "ko": "죄송해요, 지금은 제대로 생각하지 못했어요. 잠시 후에 다시 말해 주실래요?",
}
DECLINED = {
    "en": "I'm sorry, I can't help with that one. Is there something else I can do for you?",
    "pt": "Desculpe, não posso ajudar com isso. Posso ajudar com outra coisa?",
    "es": "Lo siento, no puedo ayudarte con eso. ¿Puedo ayudarte con otra cosa?",
    "fr": "Désolée, je ne peux pas vous aider pour cela. Puis-je faire autre chose pour vous ?",
    "de": "Tut mir leid, dabei kann ich nicht helfen. Kann ich sonst etwas für Sie tun?",
    "it": "Mi dispiace, con questo non posso aiutarti. C'è qualcos'altro che posso fare per te?",
    "nl": "Sorry, hiermee kan ik je niet helpen. Kan ik iets anders voor je doen?",
    "pl": "Przykro mi, w tym nie mogę pomóc. Czy mogę zrobić dla ciebie coś innego?",
    "tr": "Üzgünüm, bu konuda yardımcı olamam. Sizin için yapabileceğim başka bir şey var mı?",
    "id": "Maaf, saya tidak bisa membantu untuk yang satu ini. Ada hal lain yang bisa saya bantu?",
    "vi": "Xin lỗi, việc này mình không giúp được. Mình có thể giúp bạn việc gì khác không?",
    "ru": "Простите, с этим я помочь не могу. Могу ли я сделать для вас что-нибудь другое?",
    "ar": "آسفة، لا أستطيع المساعدة في هذا. هل هناك شيء آخر يمكنني فعله من أجلك؟",
    "hi": "माफ़ कीजिए, मैं इसमें मदद नहीं कर सकती। क्या मैं आपके लिए कुछ और कर सकती हूँ?",
    "zh": "抱歉，这件事我帮不上忙。还有什么别的我可以帮你的吗？",
    "ja": "申し訳ありませんが、これはお手伝いできません。ほかに何かできることはありますか？",
    "ko": "죄송해요, 그건 도와드릴 수 없어요. 다른 도울 일이 있을까요?",
}
CUT_SHORT = {
    "en": "That's as far as I got for now: ask me to go on and I'll continue.",
    "pt": "Parei por aqui por enquanto: me peça para continuar que eu continuo.",
    "es": "Hasta aquí he llegado por ahora: pídeme que siga y continúo.",
    "fr": "Je me suis arrêtée là pour l'instant : demandez-moi de continuer et je reprends.",
    "de": "Weiter bin ich gerade nicht gekommen: Sagen Sie mir, dass ich weitermachen soll.",
    "it": "Per ora sono arrivata fin qui: chiedimi di andare avanti e continuo.",
    "nl": "Tot hier ben ik nu gekomen: vraag me om verder te gaan, dan ga ik door.",
    "pl": "Na razie tyle zdążyłam: poproś, a napiszę dalej.",
    "tr": "Şimdilik buraya kadar gelebildim: devam etmemi isterseniz sürdürürüm.",
    "id": "Sampai di sini dulu untuk sekarang: minta saya lanjut, nanti saya teruskan.",
    "vi": "Tạm thời mình chỉ làm được đến đây: bạn bảo mình làm tiếp là mình sẽ tiếp tục.",
    "ru": "Пока я дошла только досюда: попросите, и я продолжу.",
    "ar": "هذا ما وصلتُ إليه حتى الآن، وسأكمل إذا طلبت مني ذلك.",
    "hi": "अभी के लिए मैं यहीं तक पहुँच पाई: आगे बढ़ने को कहें, तो मैं जारी रखूँगी।",
    "zh": "我暂时先写到这里：想让我继续的话，跟我说一声就行。",
    "ja": "ひとまずここまでです。「続けて」と言っていただければ、続きをお伝えします。",
    "ko": "지금은 여기까지예요. 계속하라고 하시면 이어서 할게요.",
}
# Rounds of tool calls in one turn before Violet must answer in words.
MAX_TOOL_ROUNDS = 4


@dataclass(frozen=True)
class Answer:
    """Violet's words for a turn. `remember` is false when nothing of the turn may become
    memory (the model declined it); `roll_over` asks for a rollover after the turn (the
    conversation no longer fitted the model's context); `told` is what of the words is kept as
    a told record: the model's own answer, never an apology, a refusal or an account notice."""

    text: str
    remember: bool = True
    roll_over: bool = False
    told: str = ""


class MainSession:
    def __init__(
        self,
        model: ModelClient,
        pins: Pins,
        memory: MemoryClient,
        actions: MainActions,
        window: Window,
        activity: Activity | None = None,
        accounts: Accounts | None = None,
        zone: str = UTC_NAME,
        clock: Clock = utc_now,
    ) -> None:
        """`activity`: where to show that Violet is thinking; None where no device follows
        (the benchmarks). `accounts`: what to tell the person about their account once; None
        where no account is kept (the benchmarks and unit tests). `zone`: the time zone of a
        person whose device never said theirs (`VIOLET_TIMEZONE`)."""
        self._model = model
        self._zone = zone
        self._clock = clock
        self._accounts = accounts
        self._pins = pins
        self._memory = memory
        self._actions = actions
        self._window = window
        self._activity = activity

    async def answer(self, context: TurnContext, message: Message) -> Answer:
        live = as_said(context.live, upto=message.seq)
        keys = CallKeys(f"say:{message.seq}")
        return await self._respond(context, message.text, live, context.pins, keys)

    async def tell(self, context: TurnContext, update: Update) -> Answer:
        """Violet's own words for an update: a work result, a question waiting for a yes, or
        her question about a promise that waited too long."""
        conversation = context.conversation
        if update.kind == "reminder":
            return self._reminder(context, update)
        if update.kind == "result":
            await self._pins.close_ref(conversation.id, "work", update.topic)
            await self._pins.close_ref(conversation.id, "promise", update.topic)
        elif update.kind == "approval" and not _pinned(context.pins, update):
            await self._pins.add(conversation.id, "approval", update.text, ref=update.approval_ref)
        live = as_said(context.live)
        keys = CallKeys(f"update:{update.id}")
        open_pins = await self._pins.open(conversation.id)  # as the telling changed them
        return await self._respond(context, update.text, live, open_pins, keys, update.text)

    def _reminder(self, context: TurnContext, update: Update) -> Answer:
        """A reminder's occurrence, in Violet's fixed words: no model call, so it comes at its
        time whatever the models' state. Nothing of it becomes memory."""
        zone = self.zone_of(context)
        now = self._clock()
        due = update.due_at or now
        language = person_language(as_said(context.live))
        REMINDER_DELAY_SECONDS.record(
            max((now - due).total_seconds(), 0.0), {"violet.reminder.kind": "reminder"}
        )
        return Answer(reminder_words(update.text, due, now, zone, language), remember=False)

    def zone_of(self, context: TurnContext) -> str:
        """The person's time zone: their device's, else the default."""
        return context.zone if is_zone(context.zone) else self._zone

    async def _respond(
        self,
        context: TurnContext,
        query: str,
        live: list[Message],
        open_pins: list[Pin],
        keys: CallKeys,
        update: str = "",
    ) -> Answer:
        conversation, identity = context.conversation, context.identity
        language = person_language(live)
        recollection, checked = await self._recall(identity, query)
        shown = pinned(open_pins)
        visible = self._window.visible(live)
        zone = self.zone_of(context)
        now = spoken(local_moment(self._clock(), zone))

        def prompt(seen: list[Message]) -> tuple[list[TextBlock], list[ModelMessage]]:
            return main_prompt(
                context.summary,
                shown,
                seen,
                update=update,
                remembered=recollection.remembered,
                told=recollection.told,
                memory_checked=checked,
                now=now,
                zone=zone,
            )

        span = trace.get_current_span()
        span.set_attribute("violet.turn.window", self._window.size)
        span.set_attribute("violet.turn.live_messages", len(live))
        span.set_attribute("violet.turn.visible_messages", len(visible))
        span.set_attribute("violet.turn.pinned_items", len(shown))
        span.set_attribute("violet.turn.open_items", len(open_pins))
        span.set_attribute("violet.turn.memory_items", len(recollection.remembered))
        span.set_attribute("violet.turn.told_records", len(recollection.told))
        span.set_attribute("violet.turn.memory_checked", checked)
        async with self._thinking(conversation, language):
            try:
                said = await self._words(
                    conversation, identity, prompt(visible), keys, language, update, zone
                )
            except ModelContextFull as full:
                # Only the newest half, as a rollover would carry it; the rollover follows.
                fallback("answer_cut", f"{full}; answered from the newest messages")
                carried = self._window.split(visible)[1]
                said = await self._words(
                    conversation, identity, prompt(carried), keys, language, update, zone
                )
                said = Answer(said.text, said.remember, roll_over=True, told=said.told)
        if recollection.repeated_in(said.told):
            said = Answer(said.text, said.remember, said.roll_over)
        return await self._with_notices(identity.person, said, language)

    async def _with_notices(self, person: str, said: Answer, language: str) -> Answer:
        """The answer, after anything to tell the person once about their account."""
        if self._accounts is None:
            return said
        notices = await self._accounts.take_notices(person, language)
        if not notices:
            return said
        return Answer("\n\n".join([*notices, said.text]), said.remember, said.roll_over, said.told)

    async def _words(
        self,
        conversation: Conversation,
        identity: Identity,
        prompt: tuple[list[TextBlock], list[ModelMessage]],
        keys: CallKeys,
        language: str,
        update: str,
        zone: str,
    ) -> Answer:
        """The model's answer in plain words; a refusal or a failure told plainly. With the
        person's calls held, a say is told why and an update is told in its own words."""
        system, messages = prompt
        try:
            reply = await self._converse(conversation, identity, system, messages, keys, zone)
        except CallsHeld as held:
            if update:
                return Answer(in_plain_words(update).text)
            return Answer(held_phrase(held.hold, language))
        except ModelRefused as refused:
            fallback("refusal", str(refused), category=refused.category or "")
            return Answer(phrase(DECLINED, language), remember=False)
        except SpendLimitReached as limit:
            # An account notice, not an apology: asking again will not help until it changes.
            fallback("spend_limit", str(limit))
            return Answer(phrase(SPEND_LIMIT, language))
        except ModelContextFull:
            raise
        except ModelError as error:
            ERRORS.add(1, {"violet.error.where": "main model"})
            fallback("answer_failed", str(error))
            return Answer(phrase(APOLOGY, language))
        text = in_plain_words(reply.text.strip()).text
        told = text
        if reply.stop_reason == "max_tokens":
            fallback("answer_cut", "the answer stopped at its length limit")
            text = f"{text}\n\n{phrase(CUT_SHORT, language)}".strip()
        return Answer(text or phrase(APOLOGY, language), told=told)

    def _thinking(
        self, conversation: Conversation, language: str
    ) -> contextlib.AbstractAsyncContextManager[None]:
        if self._activity is None:
            return contextlib.nullcontext()
        return self._activity.while_thinking(conversation, language)

    async def _recall(self, identity: Identity, query: str) -> tuple[Recollection, bool]:
        """What memory holds for the query, and whether memory could be checked at all: a
        miss is told to the model, so it never takes it for nothing remembered."""
        try:
            return await self._memory.recall(identity, query), True
        except RecallMissed:
            return Recollection(), False

    async def _converse(
        self,
        conversation: Conversation,
        identity: Identity,
        system: list[TextBlock],
        messages: list[ModelMessage],
        keys: CallKeys,
        zone: str,
    ) -> Reply:
        """The model's last reply, once it answers in words. The conversation only grows
        during the turn (the model's thinking goes back with its tool calls), and the last
        round keeps the tools offered but asks for words."""
        for round_number in range(MAX_TOOL_ROUNDS + 1):
            reply = await self._model.reply(
                tier="main",
                system=system,
                messages=messages,
                tools=MAIN_TOOLS,
                person=conversation.person,
                tool_choice="auto" if round_number < MAX_TOOL_ROUNDS else "none",
            )
            if not reply.tool_calls:
                return reply
            results = await self._actions.run_all(
                conversation, identity, reply.tool_calls, keys, zone
            )
            messages = [
                *messages,
                {"role": "assistant", "content": reply.content},
                {"role": "user", "content": results},
            ]
        return reply


def _pinned(open_pins: list[Pin], update: Update) -> bool:
    """Whether the approval is pinned already: by this telling, run before a crash."""
    return any(pin.kind == "approval" and pin.ref == update.approval_ref for pin in open_pins)
