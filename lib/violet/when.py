"""Times as Violet says them, in the person's language: when a reminder comes ("today at 17:00",
"every Monday at 07:30"), how late one is, and why a time makes no reminder.

Wall times are 24-hour (`17:00`), the same in every language. Weekday and month names come from
the CLDR data `babel` ships, so they are a language's own rather than a translation of ours.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, timedelta

from babel.dates import format_skeleton, format_timedelta, get_day_names

from violet.language import ENGLISH, phrase

_RULE_DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_WEEKDAYS = frozenset(_RULE_DAYS[:5])

TODAY = {
    "en": "today at {time}",
    "pt": "hoje às {time}",
    "es": "hoy a las {time}",
    "fr": "aujourd'hui à {time}",
    "de": "heute um {time}",
}
TOMORROW = {
    "en": "tomorrow at {time}",
    "pt": "amanhã às {time}",
    "es": "mañana a las {time}",
    "fr": "demain à {time}",
    "de": "morgen um {time}",
}
ON_DAY = {
    "en": "on {day} at {time}",
    "pt": "em {day} às {time}",
    "es": "el {day} a las {time}",
    "fr": "le {day} à {time}",
    "de": "am {day} um {time}",
}
EVERY_DAY = {
    "en": "every day at {time}",
    "pt": "todos os dias às {time}",
    "es": "todos los días a las {time}",
    "fr": "tous les jours à {time}",
    "de": "jeden Tag um {time}",
}
EVERY_WEEKDAY = {
    "en": "every weekday at {time}",
    "pt": "de segunda a sexta às {time}",
    "es": "de lunes a viernes a las {time}",
    "fr": "du lundi au vendredi à {time}",
    "de": "montags bis freitags um {time}",
}
# {days}: one weekday's name, or several joined.
EVERY_WEEK_ON = {
    "en": "every {days} at {time}",
    "pt": "toda {days} às {time}",
    "es": "cada {days} a las {time}",
    "fr": "chaque {days} à {time}",
    "de": "jeden {days} um {time}",
}
# Portuguese weekends are masculine: "todo sábado", "todo domingo".
_PT_MASCULINE_DAYS = frozenset({"SA", "SU"})
EVERY_INTERVAL = {
    "en": "every {interval}",
    "pt": "a cada {interval}",
    "es": "cada {interval}",
    "fr": "toutes les {interval}",
    "de": "alle {interval}",
}
EVERY_HOUR = {
    "en": "every hour",
    "pt": "a cada hora",
    "es": "cada hora",
    "fr": "toutes les heures",
    "de": "jede Stunde",
}
# Any other recurrence: when it next comes.
REPEATING = {
    "en": "repeatedly, next {when}",
    "pt": "repetidamente, a próxima vez {when}",
    "es": "repetidamente, la próxima vez {when}",
    "fr": "régulièrement, la prochaine fois {when}",
    "de": "regelmäßig, das nächste Mal {when}",
}
AND = {"en": "and", "pt": "e", "es": "y", "fr": "et", "de": "und"}

# Why a time makes no reminder. The English sentence is what the scheduling tool answers the
# model; the offline model finds it there and says it in the person's language.
REFUSALS: Mapping[str, Mapping[str, str]] = {
    "past": {
        "en": "That time has already passed.",
        "pt": "Essa hora já passou.",
        "es": "Esa hora ya ha pasado.",
        "fr": "Cette heure est déjà passée.",
        "de": "Diese Zeit ist schon vorbei.",
    },
    "impossible": {
        "en": "That date does not exist on the calendar.",
        "pt": "Essa data não existe no calendário.",
        "es": "Esa fecha no existe en el calendario.",
        "fr": "Cette date n'existe pas dans le calendrier.",
        "de": "Dieses Datum gibt es im Kalender nicht.",
    },
    "too_often": {
        "en": "A reminder can repeat at most every 15 minutes.",
        "pt": "Um lembrete pode repetir no máximo a cada 15 minutos.",
        "es": "Un recordatorio puede repetirse como mucho cada 15 minutos.",
        "fr": "Un rappel peut se répéter au plus toutes les 15 minutes.",
        "de": "Eine Erinnerung kann sich höchstens alle 15 Minuten wiederholen.",
    },
    "too_many": {
        "en": "There are already 100 reminders waiting; cancel one first.",
        "pt": "Já há 100 lembretes à espera; cancele um primeiro.",
        "es": "Ya hay 100 recordatorios pendientes; cancela uno primero.",
        "fr": "Il y a déjà 100 rappels en attente ; annulez-en un d'abord.",
        "de": "Es warten schon 100 Erinnerungen; bitte zuerst eine löschen.",
    },
    "never": {
        "en": "That repeating time never comes.",
        "pt": "Essa repetição nunca acontece.",
        "es": "Esa repetición nunca llega.",
        "fr": "Cette répétition n'arrive jamais.",
        "de": "Diese Wiederholung kommt nie vor.",
    },
    "unreadable": {
        "en": "That time cannot be read.",
        "pt": "Não consigo ler essa hora.",
        "es": "No puedo leer esa hora.",
        "fr": "Je ne peux pas lire cette heure.",
        "de": "Diese Zeit kann ich nicht lesen.",
    },
}


def refusal(kind: str, language: str = ENGLISH) -> str:
    return phrase(REFUSALS[kind], language)


def refusal_kind(sentence: str) -> str | None:
    """The kind of refusal whose English sentence `sentence` is."""
    wanted = sentence.strip()
    return next((kind for kind, said in REFUSALS.items() if said[ENGLISH] == wanted), None)


def clock_time(moment: datetime) -> str:
    return f"{moment:%H:%M}"


def occurrence(moment: datetime, today: date, language: str = ENGLISH) -> str:
    """When a local moment comes, seen from `today`: "today at 17:00", "tomorrow at 08:00",
    "on Fri, December 11 at 08:00"."""
    time = clock_time(moment)
    if moment.date() == today:
        return phrase(TODAY, language).format(time=time)
    if moment.date() == today + timedelta(days=1):
        return phrase(TOMORROW, language).format(time=time)
    day = format_skeleton("MMMMEEEEd", moment, locale=_locale(language))
    return phrase(ON_DAY, language).format(day=day, time=time)


def recurrence(repeat: str, following: datetime, today: date, language: str = ENGLISH) -> str:
    """How a recurrence comes ("every day at 21:00"), `following` being its next local
    moment; one the words below do not fit is said by when it next comes."""
    parts = dict(part.partition("=")[::2] for part in repeat.upper().split(";") if part)
    frequency, interval = parts.pop("FREQ", ""), int(parts.pop("INTERVAL", "1") or 1)
    days = [day for day in parts.pop("BYDAY", "").split(",") if day]
    time = clock_time(following)
    if frequency in ("MINUTELY", "HOURLY") and not parts and not days:
        unit = timedelta(minutes=interval) if frequency == "MINUTELY" else timedelta(hours=interval)
        if unit == timedelta(hours=1):
            return phrase(EVERY_HOUR, language)
        # Whole hours in hours ("every 2 hours"), anything else in minutes ("every 90 minutes").
        whole_hours = unit % timedelta(hours=1) == timedelta(0)
        span = format_timedelta(unit, locale=_locale(language), threshold=1 if whole_hours else 10)
        return phrase(EVERY_INTERVAL, language).format(interval=span)
    if interval == 1 and not parts and frequency == "DAILY" and not days:
        return phrase(EVERY_DAY, language).format(time=time)
    if interval == 1 and not parts and frequency == "WEEKLY":
        days = days or [_RULE_DAYS[following.weekday()]]
        if frozenset(days) == _WEEKDAYS and len(days) == 5:
            return phrase(EVERY_WEEKDAY, language).format(time=time)
        if all(day in _RULE_DAYS for day in days):
            return _every_week_on(days, time, language)
    return phrase(REPEATING, language).format(when=occurrence(following, today, language))


def _every_week_on(days: list[str], time: str, language: str) -> str:
    names = get_day_names("wide", locale=_locale(language))
    said = [names[_RULE_DAYS.index(day)] for day in days]
    joined = (
        said[0] if len(said) == 1 else f"{', '.join(said[:-1])} {phrase(AND, language)} {said[-1]}"
    )
    if language == "pt" and days[0] in _PT_MASCULINE_DAYS:
        return f"todo {joined} às {time}"
    return phrase(EVERY_WEEK_ON, language).format(days=joined, time=time)


def lateness(late: timedelta, language: str = ENGLISH) -> str:
    """How late, in words: "25 minutes", "2 hours"."""
    return format_timedelta(late, locale=_locale(language), threshold=2)


def _locale(language: str) -> str:
    return language if language in AND else ENGLISH
