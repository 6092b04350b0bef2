"""What Violet says when a reminder comes: its words, the local time it was for, and, when it
comes more than a few minutes late (the stack was down at its time), how late, with an apology.

{late} is babel's `format_timedelta` in the person's language ("25 minutes", "2 hours"), a count
in the nominative, so each sentence puts it where a nominative reads right (the Russian after a
colon, the Arabic as the subject of "مضت"). {when} is the wall time, or a CLDR day joined to it by
DAY_AND_TIME. The person is addressed as `violet.language` says."""

from __future__ import annotations

from datetime import datetime, timedelta

from babel.dates import format_skeleton

from session.reminders.times import wall_time
from violet.language import ENGLISH, phrase
from violet.when import clock_time, lateness

# Later than this after its time, a reminder says it is late.
LATE_AFTER = timedelta(minutes=5)

ON_TIME = {
    "en": "Reminder ({when}): {text}",
    "pt": "Lembrete ({when}): {text}",
    "es": "Recordatorio ({when}): {text}",
    "fr": "Rappel ({when}) : {text}",
    "de": "Erinnerung ({when}): {text}",
    "it": "Promemoria ({when}): {text}",
    "nl": "Herinnering ({when}): {text}",
    "pl": "Przypomnienie ({when}): {text}",
    "tr": "Hatırlatma ({when}): {text}",
    "id": "Pengingat ({when}): {text}",
    "vi": "Lời nhắc ({when}): {text}",
    "ru": "Напоминание ({when}): {text}",
    "ar": "تذكير ({when}): {text}",
    "hi": "रिमाइंडर ({when}): {text}",
    "zh": "提醒（{when}）：{text}",
    "ja": "リマインダー（{when}）：{text}",
    "ko": "리마인더 ({when}): {text}",
}
LATE = {
    "en": "Reminder ({when}, {late} late, sorry): {text}",
    "pt": "Lembrete ({when}, com {late} de atraso, desculpe): {text}",
    "es": "Recordatorio ({when}, con {late} de retraso, perdona): {text}",
    "fr": "Rappel ({when}, avec {late} de retard, désolée) : {text}",
    "de": "Erinnerung ({when}, {late} zu spät, Entschuldigung): {text}",
    "it": "Promemoria ({when}, in ritardo di {late}, scusa): {text}",
    "nl": "Herinnering ({when}, {late} te laat, sorry): {text}",
    "pl": "Przypomnienie ({when}, spóźnione o {late}, przepraszam): {text}",
    "tr": "Hatırlatma ({when}, {late} gecikmeyle, kusura bakmayın): {text}",
    "id": "Pengingat ({when}, terlambat {late}, maaf): {text}",
    "vi": "Lời nhắc ({when}, muộn {late}, xin lỗi bạn): {text}",
    "ru": "Напоминание ({when}, простите за опоздание: {late}): {text}",
    "ar": "تذكير ({when}، مضت {late} على موعده، عذرًا): {text}",
    "hi": "रिमाइंडर ({when}, {late} की देरी से, माफ़ कीजिए): {text}",
    "zh": "提醒（{when}，晚了{late}，抱歉）：{text}",
    "ja": "リマインダー（{when}、{late}遅れてすみません）：{text}",
    "ko": "리마인더 ({when}, {late} 늦어서 죄송해요): {text}",
}

# A reminder from another day: the CLDR day, then the wall time.
DAY_AND_TIME = {
    "en": "{day}, {time}",
    "pt": "{day}, {time}",
    "es": "{day}, {time}",
    "fr": "{day}, {time}",
    "de": "{day}, {time}",
    "it": "{day}, {time}",
    "nl": "{day}, {time}",
    "pl": "{day}, {time}",
    "tr": "{day}, {time}",
    "id": "{day}, {time}",
    "vi": "{day}, {time}",
    "ru": "{day}, {time}",
    "ar": "{day}، {time}",
    "hi": "{day}, {time}",
    "zh": "{day} {time}",
    "ja": "{day} {time}",
    "ko": "{day} {time}",
}


def reminder_words(text: str, due: datetime, now: datetime, zone: str, language: str) -> str:
    """The message of a reminder due at `due` (UTC), told at `now`, for a person in `zone`."""
    local_due, local_now = wall_time(due, zone), wall_time(now, zone)
    when = clock_time(local_due)
    if local_due.date() != local_now.date():
        day = format_skeleton("MMMMEEEEd", local_due, locale=_locale(language))
        when = phrase(DAY_AND_TIME, language).format(day=day, time=when)
    late = now - due
    if late <= LATE_AFTER:
        return phrase(ON_TIME, language).format(when=when, text=text)
    return phrase(LATE, language).format(when=when, late=lateness(late, language), text=text)


def _locale(language: str) -> str:
    return language if language in ON_TIME else ENGLISH
