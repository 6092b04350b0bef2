"""The offline model's part in reminders (CONTRACTS section 5): a reminder or scheduled work read
from the person's words becomes a `set_reminder` call; "what reminders do I have?" lists them;
"cancel the Sam reminder" lists them, then cancels the one whose words match; a time the rules
cannot read gets a question back. The person's date and time come from the note the session
writes after their words (`tools.NOW_HEADING`), as a real model reads them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from datetime import date, datetime

from violet import when
from violet.language import phrase
from violet.models import offline_phrases as say
from violet.models import tools as t
from violet.models.messages import ContentBlock, JsonObject, ModelMessage, ToolUseBlock
from violet.models.offline_reminders import Unreadable, read_schedule
from violet.models.offline_text import block_text, content_words, json_object, squash

Call = Callable[[str, JsonObject], ToolUseBlock]

_CANCEL = re.compile(
    r"^(?:cancel|stop|delete|remove|drop|cancela|cancele|cancelar|apaga|apague|anula|"
    r"annule|annulez|supprime|supprimez|lösche|löschen|storniere)\b",
    re.IGNORECASE,
)
_REMINDER_NOUN = re.compile(
    r"\b(?:reminders?|one|lembretes?|recordatorios?|rappels?|erinnerung(?:en)?|alarm)\b",
    re.IGNORECASE,
)
_LIST = re.compile(
    r"^(?:what|which|show|list|tell me)\b.*\breminders\b|^(?:my reminders|reminders)\W*$"
    r"|^(?:quais|que|mostra|mostre)\b.*\blembretes\b|^(?:qué|cuáles|muestra)\b.*\brecordatorios\b"
    r"|^(?:quels|montre|montrez)\b.*\brappels\b|^(?:welche|zeig|zeige)\b.*\berinnerungen\b",
    re.IGNORECASE,
)
# Words of a cancel request that say nothing of which reminder is meant.
_NOT_WHICH_WORDS = """
    cancel stop delete remove drop the my a an reminder reminders one to about for of that
    please cancela cancele apaga o a lembrete de do da el la recordatorio annule le rappel
    lösche die erinnerung an
"""
_NOT_WHICH = frozenset(_NOT_WHICH_WORDS.split())
_WEEKDAYS = {
    "monday": "MO",
    "tuesday": "TU",
    "wednesday": "WE",
    "thursday": "TH",
    "friday": "FR",
    "saturday": "SA",
    "sunday": "SU",
}
_NOW_FORMAT = "%A %d %B %Y, %H:%M"


def asks_to_cancel(words: str) -> bool:
    return bool(_CANCEL.match(words) and _REMINDER_NOUN.search(words))


def asks_to_list(words: str) -> bool:
    return bool(_LIST.search(words)) and not _CANCEL.match(words)


def reminder_turn(
    words: str, reading: str, offered: Collection[str], call: Call, language: str
) -> list[ContentBlock] | None:
    """What the person's words about reminders call for; None when they are about none."""
    if t.SET_REMINDER not in offered:
        return None
    if asks_to_list(words) or asks_to_cancel(words):
        return [call(t.LIST_REMINDERS, {})]
    now = local_now(reading)
    if now is None:
        return None
    wanted = read_schedule(words, now)
    if wanted is None:
        return None
    if isinstance(wanted, Unreadable):
        return [_text(phrase(say.ASK_REMINDER_TIME, language))]
    if not wanted.text:
        return [_text(phrase(say.ASK_REMINDER_WHAT, language))]
    return [
        call(
            t.SET_REMINDER,
            {"text": wanted.text, "work": wanted.work, "at": wanted.at, "repeat": wanted.repeat},
        )
    ]


def local_now(reading: str) -> datetime | None:
    """The person's local date and time, as the note after their words says it."""
    for line in t.section(reading, t.NOW_HEADING):
        try:
            return datetime.strptime(line.split(" (")[0], _NOW_FORMAT)
        except ValueError:
            continue
    return None


def after_reminder_tools(
    calls: list[ToolUseBlock],
    results: dict[str, tuple[str, bool]],
    asked: str,
    call: Call,
    language: str,
) -> list[ContentBlock] | None:
    """Violet's words (or the cancel call) once a reminder tool answered; None when no
    reminder tool was called. `asked`: the person's words of the turn."""
    for made in calls:
        name = made.get("name", "")
        result, failed = results.get(made.get("id", ""), ("", True))
        if name == t.SET_REMINDER:
            return [_text(_set(result, failed, language))]
        if name == t.CANCEL_REMINDER:
            return [_text(_cancelled(result, failed, language))]
        if name == t.LIST_REMINDERS:
            return _listed(result, failed, asked, call, language)
    return None


def _set(result: str, failed: bool, language: str) -> str:
    answer = json_object(result)
    if failed or answer is None:
        kind = when.refusal_kind(result) or "unreadable"
        return phrase(say.REMINDER_REFUSED, language).format(why=when.refusal(kind, language))
    reminder, today = answer.get("reminder") or {}, _today(answer)
    said = phrase(say.WORK_SCHEDULED if reminder.get("work") else say.REMINDER_SET, language)
    return said.format(when=_when(reminder, today, language), text=reminder.get("text", ""))


def _cancelled(result: str, failed: bool, language: str) -> str:
    answer = json_object(result)
    if failed or answer is None:
        return phrase(say.REMINDER_NOT_FOUND, language)
    cancelled = answer.get("cancelled") or {}
    return phrase(say.REMINDER_CANCELLED, language).format(text=cancelled.get("text", ""))


def _listed(result: str, failed: bool, asked: str, call: Call, language: str) -> list[ContentBlock]:
    answer = json_object(result)
    if failed or answer is None:
        return [_text(phrase(say.REMINDERS_UNAVAILABLE, language))]
    found = [r for r in answer.get("reminders") or [] if isinstance(r, dict)]
    today = _today(answer)
    if asks_to_cancel(asked):
        meant = _meant(asked, found)
        if meant is None:
            return [_text(phrase(say.REMINDER_NOT_FOUND, language))]
        return [call(t.CANCEL_REMINDER, {"reminder_id": meant["reminder_id"]})]
    if not found:
        return [_text(phrase(say.NO_REMINDERS, language))]
    lines = [f"- {_when(r, today, language)}: {squash(str(r.get('text', '')))}" for r in found]
    return [_text("\n".join([phrase(say.YOUR_REMINDERS, language), *lines]))]


def _meant(asked: str, found: list[JsonObject]) -> JsonObject | None:
    """The reminder whose words (or weekday) the cancel request names best; None when none."""
    wanted = {word for word in content_words(asked) if word not in _NOT_WHICH}
    days = {_WEEKDAYS[word] for word in wanted if word in _WEEKDAYS}

    def score(reminder: JsonObject) -> int:
        shared = len(wanted & content_words(str(reminder.get("text", ""))))
        return shared + len(days & _days_of(reminder))

    best = max(found, key=score, default=None)
    return best if best is not None and score(best) > 0 else None


def _days_of(reminder: JsonObject) -> set[str]:
    """The weekdays a reminder comes on: a weekly rule's, a one-off's own; none for a rule that
    comes every day or more often."""
    repeat = str(reminder.get("repeat", "")).upper()
    if repeat:
        days = repeat.split("BYDAY=")[1].split(";")[0] if "BYDAY=" in repeat else ""
        return set(re.findall(r"\b(MO|TU|WE|TH|FR|SA|SU)\b", days))
    if reminder.get("next"):
        return {list(_WEEKDAYS.values())[_local(reminder).weekday()]}
    return set()


def _when(reminder: JsonObject, today: date, language: str) -> str:
    following = _local(reminder)
    repeat = str(reminder.get("repeat", ""))
    if repeat:
        return when.recurrence(repeat, following, today, language)
    return when.occurrence(following, today, language)


def _local(reminder: JsonObject) -> datetime:
    return datetime.fromisoformat(str(reminder.get("next") or "1970-01-01T00:00"))


def _today(answer: JsonObject) -> date:
    return date.fromisoformat(str(answer.get("today") or "1970-01-01"))


def _text(text: str) -> ContentBlock:
    return {"type": "text", "text": text}


def person_words(messages: list[ModelMessage]) -> str:
    """The person's newest words: the last user turn that is not only tool results."""
    for message in reversed(messages):
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            return t.without_said_at(content)
        said = [b for b in content if b["type"] == "text" and not t.is_memory_note(b)]
        if said:
            return t.without_said_at(block_text(said))
    return ""
