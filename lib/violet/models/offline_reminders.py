"""Reminders and work on a schedule, read from a person's words by rules, for the offline model.

The offline model stands in for a language model where none is called, so the same words must
always give the same schedule: "remind me in 20 minutes to call Ana", "remind me to water the
plants every Monday at 7:30", "every morning at 7, look up the tide times for Porto". Each is read
into what to remind of (or the work to run), its first time as a local date-time, and how it
repeats as an RFC 5545 RRULE body.

The reader only reads. A date that cannot exist or a time already past comes through as said,
for the code that schedules to refuse it in words; a time it cannot read comes back `Unreadable`,
so that Violet asks when rather than guessing.

English is the contract. Portuguese, Spanish, French and German are read by the same grammar from
one table of words each, for the forms their tables fill in.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta


@dataclass(frozen=True)
class Wanted:
    """A reminder or a work request on a schedule, as the person asked for it."""

    text: str  # what to remind of, in the person's words, or the work request itself
    work: bool  # `text` is a work request to run at each time (it opens on a work verb)
    at: str  # the first time, local "YYYY-MM-DDTHH:MM", not checked: "2027-02-30T09:00" passes
    repeat: str  # "" for once, else an RRULE body without DTSTART: "FREQ=WEEKLY;BYDAY=MO"


@dataclass(frozen=True)
class Unreadable:
    """A reminder asked for whose time the rules cannot read: the caller asks back."""

    text: str  # what to remind of, as far as it could be told apart ("" when not)


@dataclass(frozen=True)
class _Words:
    """One language's words, each entry "|"-separated alternatives. In the tuples the position
    is the meaning: numbers from one, units from minutes to weeks, parts of the day from morning
    to night, weekdays from Monday, months from January. An empty entry leaves a form unread."""

    remind: str
    linkers: str  # what opens the reminder's text: "to", "about"
    asks: str = ""  # "remind me what ..." asks to recall, not to schedule
    polite: str = ""
    vague: str = ""  # times that are no time: "later", "sometime"
    bounds: str = ""  # turn a time into a deadline, no time to remind at: "by Friday"
    within: str = ""  # the "in" of "in 20 minutes"
    numbers: tuple[str, ...] = ()
    articles: str = ""  # the "an" of "in an hour"
    units: tuple[str, ...] = ()
    halves: str = ""  # half an hour
    at: str = ""
    am: str = ""
    pm: str = ""
    marks: str = ""  # after an hour of the 12-hour clock: "o'clock"
    marks24: str = ""  # after an hour of the 24-hour clock: "17h", "17 Uhr"
    noon: str = ""
    midnight: str = ""
    today: str = ""
    tonight: str = ""
    this: str = ""  # the "this" of "this evening"
    tomorrow: str = ""
    parts: tuple[str, ...] = ()
    on: str = ""  # before a weekday or a date: "on", "next"
    weekdays: tuple[str, ...] = ()
    months: tuple[str, ...] = ()
    of: str = ""  # "the 5th of May"
    every: str = ""
    day: str = ""  # the "day" of "every day"
    workdays: str = ""
    daily: str = ""
    also: str = ""  # "every Monday and Thursday"
    work: str = ""  # the verbs that open a work request
    text_bare: bool = False  # the text may follow "remind me" with no linker at all


ENGLISH = _Words(
    remind="remind me", linkers="to|about|that|of",
    asks="what|who|where|how|which|why|when|whether|if",
    polite="please|can you|could you|would you|will you",
    vague="sometime|some time|later|later on|soon|at some point|one day|someday|eventually",
    bounds="by|before|after|until|till|since|from|for",
    within="in", articles="a|an", halves="half an hour|half hour|a half hour",
    numbers=("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
             "eleven", "twelve"),
    units=("minute|minutes|min|mins", "hour|hours|hr|hrs", "day|days", "week|weeks"),
    at="at|@|around", am="am|a.m.|a.m|in the morning",
    pm="pm|p.m.|p.m|in the afternoon|in the evening|at night",
    marks="o'clock|oclock", marks24="h", noon="noon|midday", midnight="midnight",
    today="today", tonight="tonight", this="this", tomorrow="tomorrow",
    parts=("morning|in the morning", "afternoon|in the afternoon", "evening|in the evening",
           "night|at night"),
    on="on|on the|the|next|on next|this|this coming",
    weekdays=("monday", "tuesday|tues", "wednesday|weds", "thursday|thurs", "friday",
              "saturday", "sunday"),
    months=("january|jan", "february|feb", "march|mar", "april|apr", "may", "june|jun",
            "july|jul", "august|aug", "september|sept|sep", "october|oct", "november|nov",
            "december|dec"),
    of="of", every="every|each", day="day", daily="daily", also="and|&",
    workdays="weekday|weekdays|workday|workdays|working day|working days",
    work="look up|find|check|research|plan|fetch|calculate|write|send",
)  # fmt: skip
PORTUGUESE = _Words(
    remind="lembra-me|lembre-me|me lembra|me lembre", linkers="de|para|que|do|da|dos|das",
    asks="o que|quem|onde|como|qual|quando|se", polite="por favor",
    vague="mais tarde|depois|um dia|qualquer dia", bounds="até|antes de|depois de|para",
    within="daqui a|em|dentro de", halves="meia hora",
    numbers=("um|uma", "dois|duas", "três|tres", "quatro", "cinco", "seis", "sete", "oito",
             "nove", "dez", "onze", "doze"),
    units=("minuto|minutos|min", "hora|horas", "dia|dias", "semana|semanas"),
    at="às|as|à|a|ao|pelas|pela", am="da manhã|da manha|da madrugada", pm="da tarde|da noite",
    marks24="h|horas", noon="meio-dia", midnight="meia-noite",
    today="hoje", tonight="hoje à noite|logo à noite|esta noite", tomorrow="amanhã|amanha",
    parts=("de manhã|de manha|pela manhã", "à tarde|de tarde", "ao fim da tarde", "à noite"),
    on="na|no|na próxima|no próximo|a|no dia|dia",
    weekdays=("segunda-feira|segunda", "terça-feira|terça|terca", "quarta-feira|quarta",
              "quinta-feira|quinta", "sexta-feira|sexta", "sábado|sabado", "domingo"),
    months=("janeiro", "fevereiro", "março|marco", "abril", "maio", "junho", "julho", "agosto",
            "setembro", "outubro", "novembro", "dezembro"),
    of="de", daily="todos os dias|diariamente",
)  # fmt: skip
SPANISH = _Words(
    remind="recuérdame|recuerdame|recuérdeme|recuerdeme", linkers="que|de|para",
    asks="qué|quién|dónde|cómo|cuál|cuándo|si", polite="por favor",
    vague="más tarde|mas tarde|luego|algún día|algun dia|pronto",
    bounds="hasta|antes de|después de|despues de|para",
    within="en|dentro de", halves="media hora",
    numbers=("uno|una|un", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve",
             "diez", "once", "doce"),
    units=("minuto|minutos|min", "hora|horas", "día|días|dia|dias", "semana|semanas"),
    at="a las|a la|al|sobre las", am="de la mañana|de la manana|de la madrugada",
    pm="de la tarde|de la noche", marks24="h|horas", noon="mediodía|mediodia",
    midnight="medianoche", today="hoy", tonight="esta noche", this="esta",
    tomorrow="mañana|manana",
    parts=("por la mañana|por la manana", "por la tarde|tarde", "", "por la noche|noche"),
    on="el|el próximo|el proximo|este",
    weekdays=("lunes", "martes", "miércoles|miercoles", "jueves", "viernes", "sábado|sabado",
              "domingo"),
    months=("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
            "septiembre|setiembre", "octubre", "noviembre", "diciembre"),
    of="de", daily="todos los días|todos los dias|cada día|cada dia|diariamente",
    text_bare=True,
)  # fmt: skip
FRENCH = _Words(
    remind="rappelle-moi|rappelez-moi", linkers="de|d'|que|qu'|pour",
    asks="ce que|qui|où|comment|quel|quelle|quand|si",
    polite="s'il te plaît|s'il vous plaît|stp|svp",
    vague="plus tard|un jour|bientôt", bounds="avant|après|jusqu'à|pour",
    within="dans", halves="une demi-heure",
    numbers=("un|une", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix",
             "onze", "douze"),
    units=("minute|minutes|min", "heure|heures", "jour|jours", "semaine|semaines"),
    at="à|a|vers", am="du matin", pm="de l'après-midi|de l'apres-midi|du soir",
    marks24="h|heure|heures", noon="midi", midnight="minuit",
    today="aujourd'hui", tonight="ce soir", this="ce|cet|cette", tomorrow="demain",
    parts=("matin", "après-midi|apres-midi", "soir", "nuit"), on="le|ce",
    weekdays=("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"),
    months=("janvier", "février|fevrier", "mars", "avril", "mai", "juin", "juillet",
            "août|aout", "septembre", "octobre", "novembre", "décembre|decembre"),
    daily="tous les jours|chaque jour",
)  # fmt: skip
GERMAN = _Words(
    remind="erinnere mich|erinner mich|erinnern sie mich", linkers="an|daran|dass|daran dass",
    asks="was|wer|wo|wie|welche|welcher|wann|ob", polite="bitte|kannst du|könntest du",
    vague="später|irgendwann|bald", bounds="bis|vor|nach|ab|für",
    within="in", halves="einer halben stunde|eine halbe stunde",
    numbers=("ein|eine|einer|einem|eins", "zwei", "drei", "vier", "fünf|fuenf", "sechs",
             "sieben", "acht", "neun", "zehn", "elf", "zwölf|zwoelf"),
    units=("minute|minuten|min", "stunde|stunden", "tag|tage|tagen", "woche|wochen"),
    at="um|gegen", am="morgens|früh|vormittags|am morgen|am vormittag",
    pm="nachmittags|abends|nachts|am nachmittag|am abend",
    marks24="uhr|h", noon="mittag|mittags", midnight="mitternacht",
    today="heute", tonight="heute abend|heute nacht", tomorrow="morgen",
    parts=("früh|vormittag", "nachmittag", "abend", "nacht"),
    on="am|nächsten|am nächsten|diesen|kommenden|am kommenden",
    weekdays=("montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag|sonnabend",
              "sonntag"),
    months=("januar", "februar", "märz|maerz", "april", "mai", "juni", "juli", "august",
            "september", "oktober", "november", "dezember"),
    daily="jeden tag|täglich",
)  # fmt: skip
LANGUAGES = (ENGLISH, PORTUGUESE, SPANISH, FRENCH, GERMAN)

_UNIT_MINUTES = (1, 60, 24 * 60, 7 * 24 * 60)
_BYDAY = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_DAY_TIME = (9, 0)
_PART_TIMES = ((9, 0), (15, 0), (19, 0), (20, 0))  # tomorrow morning ... tonight
_EVERY_TIMES = ((8, 0), (15, 0), (19, 0), (21, 0))  # every morning ... every night
_WAKING = 7  # on a later day, an hour without am/pm under this is read in the afternoon
_ORDINAL = r"(?:st|nd|rd|th|er|º|ª|\.)?"
_END = r"(?=[\s,]|\Z)"  # a component ends where a word does, not inside "5:7"
_GAPS = re.compile(r"[-\s,]+")
_SEPARATORS = re.compile(r"[\s,]*")
_TRAILING = re.compile(r"[\s.!?…]+\Z")

_AFTER = frozenset({"after"})
_DAY = frozenset({"day"})
_CLOCK = frozenset({"clock"})


@dataclass(frozen=True)
class _When:
    """What one or more time phrases said. `kinds` keeps two phrases from both naming a day
    (or both a clock time): the second one then belongs to the text."""

    kinds: frozenset[str]
    after: int | None = None  # minutes from now
    rule: str = ""
    days: frozenset[int] | None = None  # the weekdays it may fall on
    offset: int | None = None  # days from today
    date: tuple[int, int] | None = None  # (month, day), not checked against the calendar
    clock: tuple[int, int] | None = None
    ambiguous: bool = False  # an hour 1-11 that may mean the morning or the evening
    part: int | None = None  # the part of the day named, which tells am from pm
    default: tuple[int, int] | None = None  # the time when no clock time is said
    bad: bool = False  # a time said but impossible to read: "25:99", "the 45th of May"


_Reader = Callable[[_Words, re.Match[str]], _When | None]


def _alt(*options: str) -> str:
    """A regex alternation of table words, with any gap between a word's parts ("lembra-me",
    "lembra me"); the longest first, so that "a.m." is tried before "a.m"."""
    words = sorted(
        {o for group in options for o in group.split("|") if o}, key=lambda o: (-len(o), o)
    )
    if not words:
        return "(?!)"
    escaped = (r"[-\s,]+".join(re.escape(p) for p in _GAPS.split(w)) for w in words)
    return "(?:" + "|".join(e.replace("'", "['’]") for e in escaped) + ")"


def _key(said: str) -> str:
    return _GAPS.sub(" ", said.lower().replace("’", "'")).strip()


def _find(options: tuple[str, ...], said: str) -> int:
    """The position of the table entry holding the words said, -1 when none does."""
    key = _key(said)
    return next((i for i, o in enumerate(options) if key in map(_key, o.split("|"))), -1)


def _count(w: _Words) -> str:
    return rf"(?P<n>\d{{1,4}}|{_alt(w.articles, *w.numbers)})"


def _count_of(w: _Words, said: str) -> int:
    if said.isdigit():
        return int(said)
    return 1 if _find((w.articles,), said) == 0 else _find(w.numbers, said) + 1


def _part(w: _Words, said: str | None) -> int | None:
    return _find(w.parts, said) if said else None


def _day_at(kinds: frozenset[str], part: int | None, times: tuple[tuple[int, int], ...]) -> _When:
    return _When(kinds, part=part, default=_DAY_TIME if part is None else times[part])


def _weekly(days: frozenset[int]) -> str:
    if len(days) == 7:
        return "FREQ=DAILY"
    return "FREQ=WEEKLY;BYDAY=" + ",".join(_BYDAY[i] for i in sorted(days))


def _within(w: _Words) -> str:
    unit = rf"{_count(w)}\s+(?P<unit>{_alt(*w.units)})"
    return rf"{_alt(w.within)}\s+(?:{unit}|(?P<half>{_alt(w.halves)}))"


def _read_within(w: _Words, m: re.Match[str]) -> _When:
    if m["half"]:
        return _When(_AFTER, after=30)
    return _When(_AFTER, after=_count_of(w, m["n"]) * _UNIT_MINUTES[_find(w.units, m["unit"])])


def _every_days(w: _Words) -> str:
    one = rf"{_alt(*w.weekdays)}s?"
    some = rf"{one}(?:\s*,\s*{one}|\s+{_alt(w.also)}\s+{one})*"
    named = rf"(?P<day>{_alt(w.day)})|(?P<part>{_alt(*w.parts)})|(?P<workdays>{_alt(w.workdays)})"
    return rf"{_alt(w.every)}\s+(?:{named}|(?P<some>{some}))|{_alt(w.daily)}"


def _read_every_days(w: _Words, m: re.Match[str]) -> _When:
    if m["workdays"]:
        days = frozenset(range(5))
    elif m["some"]:
        days = frozenset(i for s in _GAPS.split(m["some"]) if (i := _weekday_named(w, s)) >= 0)
    else:
        days = frozenset(range(7))
    return replace(_day_at(_DAY, _part(w, m["part"]), _EVERY_TIMES), days=days, rule=_weekly(days))


def _weekday_named(w: _Words, said: str) -> int:
    """Monday for "Monday" and "Mondays"; -1 for the "and" between them."""
    found = _find(w.weekdays, said)
    return found if found >= 0 or not said.lower().endswith("s") else _find(w.weekdays, said[:-1])


def _every_n(w: _Words) -> str:
    return rf"{_alt(w.every)}\s+(?:{_count(w)}\s+)?(?P<unit>{_alt(*w.units[:2])})"


def _read_every_n(w: _Words, m: re.Match[str]) -> _When:
    step = _count_of(w, m["n"]) if m["n"] else 1
    unit = _find(w.units, m["unit"])
    rule = ("FREQ=MINUTELY", "FREQ=HOURLY")[unit] + (f";INTERVAL={step}" if step != 1 else "")
    return _When(_AFTER, after=step * _UNIT_MINUTES[unit], rule=rule, bad=step == 0)


def _today(w: _Words) -> str:
    parts = _alt(*w.parts)
    today = rf"{_alt(w.today)}(?:\s+(?P<part>{parts}))?"
    return rf"(?P<tonight>{_alt(w.tonight)})|{today}|{_alt(w.this)}\s+(?P<this>{parts})"


def _read_today(w: _Words, m: re.Match[str]) -> _When:
    if m["tonight"]:
        return replace(_day_at(_DAY, 3, _PART_TIMES), offset=0)
    part = _part(w, m["part"] or m["this"])
    # "today" alone names no time, and 09:00 would most often be past already: ask instead
    return _When(_DAY, offset=0, part=part, default=None if part is None else _PART_TIMES[part])


def _tomorrow(w: _Words) -> str:
    return rf"{_alt(w.tomorrow)}(?:\s+(?P<part>{_alt(*w.parts)}))?"


def _read_tomorrow(w: _Words, m: re.Match[str]) -> _When:
    return replace(_day_at(_DAY, _part(w, m["part"]), _PART_TIMES), offset=1)


def _weekday(w: _Words) -> str:
    day = rf"(?P<wd>{_alt(*w.weekdays)})(?P<plural>s)?"
    return rf"(?:{_alt(w.on)}\s+)?{day}(?:\s+(?P<part>{_alt(*w.parts)}))?"


def _read_weekday(w: _Words, m: re.Match[str]) -> _When:
    days = frozenset({_find(w.weekdays, m["wd"])})
    # "on Mondays" is every Monday
    rule = _weekly(days) if m["plural"] else ""
    return replace(_day_at(_DAY, _part(w, m["part"]), _PART_TIMES), days=days, rule=rule)


def _date_day_first(w: _Words) -> str:
    day = rf"(?P<d>\d{{1,2}}){_ORDINAL}"
    return rf"(?:{_alt(w.on)}\s+)?{day}(?:\s+{_alt(w.of)})?\s+(?P<mon>{_alt(*w.months)})"


def _date_month_first(w: _Words) -> str:
    return rf"(?:{_alt(w.on)}\s+)?(?P<mon>{_alt(*w.months)})\s+(?P<d>\d{{1,2}}){_ORDINAL}"


def _read_date(w: _Words, m: re.Match[str]) -> _When:
    day = int(m["d"])
    month = _find(w.months, m["mon"]) + 1
    return _When(_DAY, date=(month, day), default=_DAY_TIME, bad=not 1 <= day <= 31)


def _clock(w: _Words) -> str:
    hour = rf"(?P<h>\d{{1,2}}|{_alt(*w.numbers)})(?:\s*(?P<sep>[:.h])\s*(?P<m>\d{{2}}))?"
    mark = rf"(?:\s*(?P<mark24>{_alt(w.marks24)})|\s*(?P<mark>{_alt(w.marks)}))?"
    half = rf"(?:\s*(?P<am>{_alt(w.am)})|\s*(?P<pm>{_alt(w.pm)}))?"
    named = rf"(?P<noon>{_alt(w.noon)})|(?P<midnight>{_alt(w.midnight)})"
    return rf"(?:(?P<at>{_alt(w.at)})\s+)?(?:{named}|{hour}{mark}{half})"


def _read_clock(w: _Words, m: re.Match[str]) -> _When | None:
    if m["noon"] or m["midnight"]:
        return _When(_CLOCK, clock=(12 if m["noon"] else 0, 0))
    said, minute = m["h"], int(m["m"] or 0)
    hour = int(said) if said.isdigit() else _find(w.numbers, said) + 1
    if m["am"] or m["pm"]:
        bad = not 1 <= hour <= 12 or minute > 59
        return _When(_CLOCK, clock=(hour % 12 + (12 if m["pm"] else 0), minute), bad=bad)
    if not (m["at"] or m["m"] or m["mark"] or m["mark24"]):
        return None  # a bare number is no time: "remind me to buy 2"
    # "07:30" and "8h" are read on the 24-hour clock as written
    plain = said.startswith("0") or bool(m["mark24"]) or (m["sep"] or "").lower() == "h"
    ambiguous = 1 <= hour <= 11 and not plain
    return _When(_CLOCK, clock=(hour, minute), ambiguous=ambiguous, bad=hour > 23 or minute > 59)


# In the order tried: "every day" before "every N hours", a date before the clock it starts like.
_COMPONENTS: tuple[tuple[Callable[[_Words], str], _Reader], ...] = (
    (_within, _read_within),
    (_every_days, _read_every_days),
    (_every_n, _read_every_n),
    (_today, _read_today),
    (_tomorrow, _read_tomorrow),
    (_weekday, _read_weekday),
    (_date_day_first, _read_date),
    (_date_month_first, _read_date),
    (_clock, _read_clock),
)


@dataclass(frozen=True)
class _Grammar:
    """One language's words compiled: `starts` reads the time phrases that open the words,
    `ends` those that close them."""

    words: _Words
    remind: re.Pattern[str]
    asks: re.Pattern[str]
    linker: re.Pattern[str]
    vague: re.Pattern[str]
    bound: re.Pattern[str]
    work: re.Pattern[str]
    starts: tuple[tuple[re.Pattern[str], _Reader], ...]
    ends: tuple[tuple[re.Pattern[str], _Reader], ...]


def _grammar(w: _Words) -> _Grammar:
    vague = _alt(w.vague)
    return _Grammar(
        words=w,
        remind=re.compile(rf"{_alt(w.remind)}{_END}[\s,:]*", re.I),
        asks=re.compile(rf"{_alt(w.asks)}{_END}", re.I),
        linker=re.compile(rf"(?<!\S){_alt(w.linkers)}(?:[\s,]+|(?<=['’]))", re.I),
        vague=re.compile(rf"\A{vague}(?:[\s,]+|\Z)|(?:\A|[\s,]+){vague}\Z", re.I),
        bound=re.compile(rf"(?<!\S){_alt(w.bounds)}\Z", re.I),
        work=re.compile(rf"{_alt(w.work)}{_END}", re.I),
        starts=tuple((re.compile(rf"(?:{b(w)}){_END}", re.I), r) for b, r in _COMPONENTS),
        ends=tuple((re.compile(rf"(?<!\S)(?:{b(w)})\Z", re.I), r) for b, r in _COMPONENTS),
    )


_GRAMMARS = tuple(_grammar(w) for w in LANGUAGES)
_POLITE = _alt(*(w.polite for w in LANGUAGES))
_POLITE_START = re.compile(rf"{_POLITE}(?:[\s,]+|\Z)", re.I)
_POLITE_END = re.compile(rf"[\s,]+{_POLITE}\Z", re.I)


def read_schedule(words: str, now: datetime) -> Wanted | Unreadable | None:
    """`words`: the person's message (a leading "please"/"can you"/"could you" already stripped
    by the caller, but tolerated anyway); `now`: the person's local date and time, naive, minute
    precision. None when the words do not ask for a reminder or scheduled work at all."""
    said = _clean(words)
    now = now.replace(second=0, microsecond=0)
    for grammar in _GRAMMARS:
        if asked := grammar.remind.match(said):
            return _reminder(grammar, _clean(said[asked.end() :]), now)
    for grammar in _GRAMMARS:
        if grammar.words.work and (found := _scheduled(grammar, said, now)):
            return found
    return None


def _clean(words: str) -> str:
    said = _TRAILING.sub("", words.strip())
    while polite := _POLITE_START.match(said):
        said = said[polite.end() :]
    return _TRAILING.sub("", _POLITE_END.sub("", said))


def _reminder(g: _Grammar, rest: str, now: datetime) -> Wanted | Unreadable | None:
    """After "remind me": the time first and the text after it, or the text first."""
    if g.asks.match(rest):
        return None
    when, start = _starts(g, rest)
    if when is not None:
        # a time phrase at the end too is left in the text: "tell Ana the party is at 5"
        return _wanted(when, _text(g, rest[start:]), False, now)
    if not g.linker.match(rest) and not g.words.text_bare:
        found = g.linker.search(rest)
        return Unreadable(g.vague.sub("", rest[found.end() :]) if found else "")
    when, end = _ends(g, rest)
    text = _text(g, rest[:end])
    if when is None or g.bound.search(text):
        return Unreadable(g.vague.sub("", _text(g, rest)))
    return _wanted(when, text, False, now)


def _scheduled(g: _Grammar, said: str, now: datetime) -> Wanted | Unreadable | None:
    """Words opening on a time without "remind me": work when a work verb follows; a reminder
    when the time repeats at a set time ("every day at 9 take my pills"); else not a schedule
    ("every day is a gift", "tomorrow, look up the weather")."""
    when, start = _starts(g, said)
    if when is None or not (rest := said[start:]):
        return None
    timed = when.clock is not None or when.after is not None
    if g.work.match(rest) and (timed or when.rule):
        return _wanted(when, rest, True, now)
    if when.rule and timed:
        return _wanted(when, _text(g, rest), False, now)
    return None


def _text(g: _Grammar, said: str) -> str:
    said = said.strip(" ,;:")
    link = g.linker.match(said)
    return said[link.end() :].strip(" ,;:") if link else said


def _wanted(when: _When, text: str, work: bool, now: datetime) -> Wanted | Unreadable:
    found = None if when.bad else _resolve(when, now)
    if found is None:
        return Unreadable(text)
    return Wanted(text=text, work=work, at=found[0], repeat=found[1])


def _component(
    table: tuple[tuple[re.Pattern[str], _Reader], ...], w: _Words, said: str, pos: int | None
) -> tuple[_When, int, int] | None:
    """The first time phrase of `table` read at `pos` (anywhere when None: the patterns of
    `_Grammar.ends` hold to the end themselves), with where it starts and ends."""
    for pattern, read in table:
        m = pattern.search(said) if pos is None else pattern.match(said, pos)
        if m and (found := read(w, m)):
            return found, m.start(), m.end()
    return None


def _starts(g: _Grammar, said: str) -> tuple[_When | None, int]:
    """The time phrases opening `said`, and where what follows them starts."""
    when: _When | None = None
    pos = 0
    while part := _component(g.starts, g.words, said, pos):
        merged = part[0] if when is None else _merge(when, part[0])
        if merged is None:
            break
        gap = _SEPARATORS.match(said, part[2])
        when, pos = merged, gap.end() if gap else part[2]
    return when, pos


def _ends(g: _Grammar, said: str) -> tuple[_When | None, int]:
    """The time phrases closing `said`, and where what precedes them ends."""
    when: _When | None = None
    end = len(said)
    while part := _component(g.ends, g.words, said[:end], None):
        merged = part[0] if when is None else _merge(part[0], when)
        if merged is None:
            break
        when, end = merged, len(said[: part[1]].rstrip(" ,"))
    return when, end


def _merge(a: _When, b: _When) -> _When | None:
    """A day and a clock time make one time; any other pair is one phrase too many."""
    if a.kinds & b.kinds or _AFTER & (a.kinds | b.kinds):
        return None
    day, clock = (a, b) if a.kinds >= _DAY else (b, a)
    kinds = a.kinds | b.kinds
    return replace(
        day, kinds=kinds, clock=clock.clock, ambiguous=clock.ambiguous, bad=a.bad or b.bad
    )


def _resolve(w: _When, now: datetime) -> tuple[str, str] | None:
    """The first time as "YYYY-MM-DDTHH:MM" and the repeat rule; None when no time is said."""
    if w.after is not None:
        return f"{now + timedelta(minutes=w.after):%Y-%m-%dT%H:%M}", w.rule
    if w.clock is not None and not w.kinds >= _DAY:
        return _next_clock(w.clock, w.ambiguous, now), ""
    time = _time(w, now)
    if time is None:
        return None
    if w.date is not None:
        # compared as numbers, so that "February 30" is passed on rather than refused here
        month, day = w.date
        year = now.year + ((month, day, *time) <= (now.month, now.day, now.hour, now.minute))
        return f"{year:04d}-{month:02d}-{day:02d}T{time[0]:02d}:{time[1]:02d}", ""
    if w.days is not None:
        return _stamp(_next_on(w.days, time, now), time), w.rule
    return _stamp(now.date() + timedelta(days=w.offset or 0), time), ""


def _time(w: _When, now: datetime) -> tuple[int, int] | None:
    if w.clock is None:
        return w.default
    hour, minute = w.clock
    if not w.ambiguous:
        return w.clock
    if w.part is not None:
        return hour + (12 if w.part else 0), minute
    if w.offset == 0:
        later = (h for h in (hour, hour + 12) if (h, minute) > (now.hour, now.minute))
        return next(later, hour + 12), minute
    return hour + (12 if hour < _WAKING else 0), minute


def _next_clock(clock: tuple[int, int], ambiguous: bool, now: datetime) -> str:
    """A clock time with no day: the soonest reading strictly after now, else tomorrow."""
    hour, minute = clock
    for h in (hour, hour + 12) if ambiguous else (hour,):
        if (h, minute) > (now.hour, now.minute):
            return _stamp(now.date(), (h, minute))
    return _stamp(now.date() + timedelta(days=1), clock)


def _next_on(days: frozenset[int], time: tuple[int, int], now: datetime) -> date:
    today = now.date()
    if today.weekday() in days and time > (now.hour, now.minute):
        return today
    ahead = (today + timedelta(days=k) for k in range(1, 8))
    return next(d for d in ahead if d.weekday() in days)


def _stamp(day: date, time: tuple[int, int]) -> str:
    return f"{day:%Y-%m-%d}T{time[0]:02d}:{time[1]:02d}"
