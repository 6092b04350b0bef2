"""What Violet says when a reminder comes: its words, the local time it was for, and, when it
comes more than a few minutes late (the stack was down at its time), how late, with an apology."""

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
}
LATE = {
    "en": "Reminder ({when}, {late} late, sorry): {text}",
    "pt": "Lembrete ({when}, com {late} de atraso, desculpe): {text}",
    "es": "Recordatorio ({when}, con {late} de retraso, perdona): {text}",
    "fr": "Rappel ({when}, avec {late} de retard, désolée) : {text}",
    "de": "Erinnerung ({when}, {late} zu spät, Entschuldigung): {text}",
}


def reminder_words(text: str, due: datetime, now: datetime, zone: str, language: str) -> str:
    """The message of a reminder due at `due` (UTC), told at `now`, for a person in `zone`."""
    local_due, local_now = wall_time(due, zone), wall_time(now, zone)
    when = clock_time(local_due)
    if local_due.date() != local_now.date():
        day = format_skeleton("MMMMEEEEd", local_due, locale=_locale(language))
        when = f"{day}, {when}"
    late = now - due
    if late <= LATE_AFTER:
        return phrase(ON_TIME, language).format(when=when, text=text)
    return phrase(LATE, language).format(when=when, late=lateness(late, language), text=text)


def _locale(language: str) -> str:
    return language if language in ON_TIME else ENGLISH
