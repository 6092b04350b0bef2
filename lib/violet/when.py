"""Times as Violet says them, in the person's language: when a reminder comes ("today at 17:00",
"every Monday at 07:30"), how late one is, and why a time makes no reminder.

Wall times are 24-hour (`17:00`), the same in every language. Weekday and month names come from
the CLDR data `babel` ships, so they are a language's own rather than a translation of ours; the
words around them are fitted to what CLDR gives each language, with the few forms it lacks
kept here (Russian and Polish weekdays after "every", the Portuguese masculine weekend, Turkish
and Arabic spans after "every").

The refusals address the person as `violet.language` says.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, timedelta
from typing import Literal

from babel.dates import format_skeleton, format_timedelta, get_day_names

from violet.language import ENGLISH, phrase

_RULE_DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_WEEKDAYS = frozenset(_RULE_DAYS[:5])

# The CLDR locale `babel` reads each language's names and units from.
LOCALES = {
    "en": "en",
    "pt": "pt",
    "es": "es",
    "fr": "fr",
    "de": "de",
    "it": "it",
    "nl": "nl",
    "pl": "pl",
    "tr": "tr",
    "id": "id",
    "vi": "vi",
    "ru": "ru",
    "ar": "ar",
    "hi": "hi",
    "zh": "zh_Hans",
    "ja": "ja",
    "ko": "ko",
}

TODAY = {
    "en": "today at {time}",
    "pt": "hoje às {time}",
    "es": "hoy a las {time}",
    "fr": "aujourd'hui à {time}",
    "de": "heute um {time}",
    "it": "oggi alle {time}",
    "nl": "vandaag om {time}",
    "pl": "dziś o {time}",
    "tr": "bugün saat {time}",
    "id": "hari ini pukul {time}",
    "vi": "hôm nay lúc {time}",
    "ru": "сегодня в {time}",
    "ar": "اليوم الساعة {time}",
    "hi": "आज {time} बजे",
    "zh": "今天 {time}",
    "ja": "今日の{time}",
    "ko": "오늘 {time}",
}
TOMORROW = {
    "en": "tomorrow at {time}",
    "pt": "amanhã às {time}",
    "es": "mañana a las {time}",
    "fr": "demain à {time}",
    "de": "morgen um {time}",
    "it": "domani alle {time}",
    "nl": "morgen om {time}",
    "pl": "jutro o {time}",
    "tr": "yarın saat {time}",
    "id": "besok pukul {time}",
    "vi": "ngày mai lúc {time}",
    "ru": "завтра в {time}",
    "ar": "غدًا الساعة {time}",
    "hi": "कल {time} बजे",
    "zh": "明天 {time}",
    "ja": "明日の{time}",
    "ko": "내일 {time}",
}
# {day}: CLDR's weekday, day and month ("Fri, December 11", "пт, 11 декабря", "12月11日周五").
ON_DAY = {
    "en": "on {day} at {time}",
    "pt": "em {day} às {time}",
    "es": "el {day} a las {time}",
    "fr": "le {day} à {time}",
    "de": "am {day} um {time}",
    "it": "{day} alle {time}",
    "nl": "op {day} om {time}",
    "pl": "w {day} o {time}",
    "tr": "{day} saat {time}",
    "id": "pada {day} pukul {time}",
    "vi": "vào {day} lúc {time}",
    "ru": "в {day} в {time}",
    "ar": "يوم {day} الساعة {time}",
    "hi": "{day} को {time} बजे",
    "zh": "{day} {time}",
    "ja": "{day}の{time}",
    "ko": "{day} {time}",
}
# Before Tuesday (wt., вт) Polish "w" and Russian "в" are said "we" and "во".
_ON_TUESDAY = {"pl": ("w ", "we "), "ru": ("в ", "во ")}
EVERY_DAY = {
    "en": "every day at {time}",
    "pt": "todos os dias às {time}",
    "es": "todos los días a las {time}",
    "fr": "tous les jours à {time}",
    "de": "jeden Tag um {time}",
    "it": "ogni giorno alle {time}",
    "nl": "elke dag om {time}",
    "pl": "codziennie o {time}",
    "tr": "her gün saat {time}",
    "id": "setiap hari pukul {time}",
    "vi": "mỗi ngày lúc {time}",
    "ru": "каждый день в {time}",
    "ar": "كل يوم الساعة {time}",
    "hi": "हर दिन {time} बजे",
    "zh": "每天 {time}",
    "ja": "毎日{time}",
    "ko": "매일 {time}",
}
EVERY_WEEKDAY = {
    "en": "every weekday at {time}",
    "pt": "de segunda a sexta às {time}",
    "es": "de lunes a viernes a las {time}",
    "fr": "du lundi au vendredi à {time}",
    "de": "montags bis freitags um {time}",
    "it": "dal lunedì al venerdì alle {time}",
    "nl": "elke werkdag om {time}",
    "pl": "od poniedziałku do piątku o {time}",
    "tr": "hafta içi her gün saat {time}",
    "id": "setiap Senin sampai Jumat pukul {time}",
    "vi": "từ Thứ Hai đến Thứ Sáu lúc {time}",
    "ru": "по будням в {time}",
    "ar": "من الاثنين إلى الجمعة الساعة {time}",
    "hi": "सोमवार से शुक्रवार तक {time} बजे",
    "zh": "每周一至周五 {time}",
    "ja": "平日は毎日{time}",
    "ko": "평일 매일 {time}",
}
# {days}: one weekday's name, or several joined by LIST_JOINS. Russian and Polish have "every"
# in {days} itself, since it agrees with the day (see _EVERY_DAY_FORMS).
EVERY_WEEK_ON = {
    "en": "every {days} at {time}",
    "pt": "toda {days} às {time}",
    "es": "cada {days} a las {time}",
    "fr": "chaque {days} à {time}",
    "de": "jeden {days} um {time}",
    "it": "ogni {days} alle {time}",
    "nl": "elke {days} om {time}",
    "pl": "{days} o {time}",
    "tr": "her {days} saat {time}",
    "id": "setiap {days} pukul {time}",
    "vi": "mỗi {days} lúc {time}",
    "ru": "{days} в {time}",
    "ar": "كل يوم {days} الساعة {time}",
    "hi": "हर {days} को {time} बजे",
    "zh": "每{days} {time}",
    "ja": "毎週{days}の{time}",
    "ko": "매주 {days} {time}",
}
# Portuguese weekends are masculine: "todo sábado", "todo domingo".
_PT_MASCULINE_DAYS = frozenset({"SA", "SU"})
# Russian and Polish "every" takes the gender of the day, and several days are said as a
# plural ("по понедельникам и средам", "w poniedziałki i środy"); CLDR has the names only in
# the nominative, so the forms are here, Monday first.
_EVERY_DAY_FORMS = {
    "ru": (
        "каждый понедельник",
        "каждый вторник",
        "каждую среду",
        "каждый четверг",
        "каждую пятницу",
        "каждую субботу",
        "каждое воскресенье",
    ),
    "pl": (
        "w każdy poniedziałek",
        "w każdy wtorek",
        "w każdą środę",
        "w każdy czwartek",
        "w każdy piątek",
        "w każdą sobotę",
        "w każdą niedzielę",
    ),
}
_SEVERAL_DAYS_FORMS = {
    "ru": (
        "понедельникам",
        "вторникам",
        "средам",
        "четвергам",
        "пятницам",
        "субботам",
        "воскресеньям",
    ),
    "pl": ("poniedziałki", "wtorki", "środy", "czwartki", "piątki", "soboty", "niedziele"),
}
# Chinese says a weekday as 周一 after 每; Arabic as the bare noun after كل يوم ("كل يوم اثنين");
# Turkish writes it lowercase but for a date.
_DAY_NAME_WIDTH: Mapping[str, Literal["abbreviated", "wide"]] = {"zh": "abbreviated"}
_ARABIC_ARTICLE = "ال"
# How weekdays are listed: the mark between names, before the last of two, and before the last
# of more ("Monday, Wednesday and Friday"; Indonesian "Senin, Rabu, dan Jumat"; Arabic joins
# each with و; Korean names all end in 일 and so take 과).
LIST_JOINS = {
    "en": (", ", " and ", " and "),
    "pt": (", ", " e ", " e "),
    "es": (", ", " y ", " y "),
    "fr": (", ", " et ", " et "),
    "de": (", ", " und ", " und "),
    "it": (", ", " e ", " e "),
    "nl": (", ", " en ", " en "),
    "pl": (", ", " i ", " i "),
    "tr": (", ", " ve ", " ve "),
    "id": (", ", " dan ", ", dan "),
    "vi": (", ", " và ", " và "),
    "ru": (", ", " и ", " и "),
    "ar": (" و", " و", " و"),
    "hi": (", ", " और ", " और "),
    "zh": ("、", "和", "和"),
    "ja": ("・", "・", "・"),
    "ko": (", ", "과 ", "과 "),
}
# {interval}: CLDR's "30 minutes", "2 hours".
EVERY_INTERVAL = {
    "en": "every {interval}",
    "pt": "a cada {interval}",
    "es": "cada {interval}",
    "fr": "toutes les {interval}",
    "de": "alle {interval}",
    "it": "ogni {interval}",
    "nl": "om de {interval}",
    "pl": "co {interval}",
    "tr": "{interval} bir",
    "id": "setiap {interval}",
    "vi": "mỗi {interval}",
    "ru": "каждые {interval}",
    "ar": "كل {interval}",
    "hi": "हर {interval}",
    "zh": "每{interval}",
    "ja": "{interval}ごと",
    "ko": "{interval}마다",
}
# Turkish says "every 30 minutes" as "30 dakikada bir": the unit in the locative.
_TR_LOCATIVE = {
    "saniye": "saniyede",
    "dakika": "dakikada",
    "saat": "saatte",
    "gün": "günde",
    "hafta": "haftada",
}
# Arabic "every" takes the genitive: CLDR's dual "ساعتان" is "كل ساعتين".
_AR_GENITIVE_DUALS = {"ساعتان": "ساعتين", "دقيقتان": "دقيقتين", "يومان": "يومين"}
EVERY_HOUR = {
    "en": "every hour",
    "pt": "a cada hora",
    "es": "cada hora",
    "fr": "toutes les heures",
    "de": "jede Stunde",
    "it": "ogni ora",
    "nl": "elk uur",
    "pl": "co godzinę",
    "tr": "saatte bir",
    "id": "setiap jam",
    "vi": "mỗi tiếng",
    "ru": "каждый час",
    "ar": "كل ساعة",
    "hi": "हर घंटे",
    "zh": "每小时",
    "ja": "1時間ごと",
    "ko": "매시간",
}
# Any other recurrence: when it next comes.
REPEATING = {
    "en": "repeatedly, next {when}",
    "pt": "repetidamente, a próxima vez {when}",
    "es": "repetidamente, la próxima vez {when}",
    "fr": "régulièrement, la prochaine fois {when}",
    "de": "regelmäßig, das nächste Mal {when}",
    "it": "regolarmente, la prossima volta {when}",
    "nl": "regelmatig, de volgende keer {when}",
    "pl": "regularnie, następnym razem {when}",
    "tr": "düzenli aralıklarla (bir sonraki: {when})",
    "id": "secara berkala (berikutnya: {when})",
    "vi": "định kỳ (lần tới: {when})",
    "ru": "регулярно, в следующий раз {when}",
    "ar": "بشكل متكرر، والمرة القادمة {when}",
    "hi": "नियमित रूप से (अगली बार: {when})",
    "zh": "定期（下次：{when}）",
    "ja": "定期的に、次回は{when}",
    "ko": "주기적으로, 다음번엔 {when}",
}

# Why a time makes no reminder. The English sentence is what the scheduling tool answers the
# model; the offline model finds it there and says it in the person's language, addressing the
# person as `violet.models.offline_phrases` does.
REFUSALS: Mapping[str, Mapping[str, str]] = {
    "past": {
        "en": "That time has already passed.",
        "pt": "Essa hora já passou.",
        "es": "Esa hora ya ha pasado.",
        "fr": "Cette heure est déjà passée.",
        "de": "Diese Zeit ist schon vorbei.",
        "it": "Quell'orario è già passato.",
        "nl": "Dat tijdstip is al voorbij.",
        "pl": "Ta godzina już minęła.",
        "tr": "Bu saat çoktan geçti.",
        "id": "Waktu itu sudah lewat.",
        "vi": "Thời điểm đó đã qua rồi.",
        "ru": "Это время уже прошло.",
        "ar": "هذا الوقت قد مضى بالفعل.",
        "hi": "यह समय पहले ही निकल चुका है।",
        "zh": "这个时间已经过去了。",
        "ja": "その時間はもう過ぎています。",
        "ko": "그 시간은 이미 지났어요.",
    },
    "impossible": {
        "en": "That date does not exist on the calendar.",
        "pt": "Essa data não existe no calendário.",
        "es": "Esa fecha no existe en el calendario.",
        "fr": "Cette date n'existe pas dans le calendrier.",
        "de": "Dieses Datum gibt es im Kalender nicht.",
        "it": "Quella data non esiste nel calendario.",
        "nl": "Die datum bestaat niet op de kalender.",
        "pl": "Takiej daty nie ma w kalendarzu.",
        "tr": "Bu tarih takvimde yok.",
        "id": "Tanggal itu tidak ada di kalender.",
        "vi": "Ngày đó không có trên lịch.",
        "ru": "Такой даты нет в календаре.",
        "ar": "هذا التاريخ غير موجود في التقويم.",
        "hi": "यह तारीख़ कैलेंडर में है ही नहीं।",
        "zh": "日历上没有这个日期。",
        "ja": "その日付はカレンダーに存在しません。",
        "ko": "그 날짜는 달력에 없어요.",
    },
    "too_often": {
        "en": "A reminder can repeat at most every 15 minutes.",
        "pt": "Um lembrete pode repetir no máximo a cada 15 minutos.",
        "es": "Un recordatorio puede repetirse como mucho cada 15 minutos.",
        "fr": "Un rappel peut se répéter au plus toutes les 15 minutes.",
        "de": "Eine Erinnerung kann sich höchstens alle 15 Minuten wiederholen.",
        "it": "Un promemoria può ripetersi al massimo ogni 15 minuti.",
        "nl": "Een herinnering kan hooguit om de 15 minuten terugkomen.",
        "pl": "Przypomnienie może się powtarzać najwyżej co 15 minut.",
        "tr": "Bir hatırlatıcı en fazla 15 dakikada bir tekrarlanabilir.",
        "id": "Pengingat paling sering bisa diulang setiap 15 menit.",
        "vi": "Lời nhắc chỉ có thể lặp lại tối đa 15 phút một lần.",
        "ru": "Напоминание может повторяться не чаще чем раз в 15 минут.",
        "ar": "لا يمكن أن يتكرر التذكير أكثر من مرة كل 15 دقيقة.",
        "hi": "रिमाइंडर ज़्यादा से ज़्यादा हर 15 मिनट में दोहराया जा सकता है।",
        "zh": "提醒最频繁也只能每15分钟重复一次。",
        "ja": "リマインダーの繰り返しは最短で15分ごとです。",
        "ko": "알림은 최소 15분 간격으로만 반복할 수 있어요.",
    },
    "too_many": {
        "en": "There are already 100 reminders waiting; cancel one first.",
        "pt": "Já há 100 lembretes à espera; cancele um primeiro.",
        "es": "Ya hay 100 recordatorios pendientes; cancela uno primero.",
        "fr": "Il y a déjà 100 rappels en attente ; annulez-en un d'abord.",
        "de": "Es warten schon 100 Erinnerungen; bitte zuerst eine löschen.",
        "it": "Ci sono già 100 promemoria in attesa; annullane prima uno.",
        "nl": "Er staan al 100 herinneringen klaar; annuleer er eerst een.",
        "pl": "Czeka już 100 przypomnień; najpierw anuluj jedno.",
        "tr": "Zaten bekleyen 100 hatırlatıcı var; önce birini iptal edin.",
        "id": "Sudah ada 100 pengingat yang menunggu; batalkan satu dulu, ya.",
        "vi": "Đã có 100 lời nhắc đang chờ; bạn hủy bớt một cái trước nhé.",
        "ru": "Уже есть 100 ожидающих напоминаний; сначала отмените одно.",
        "ar": "هناك 100 تذكير في الانتظار بالفعل؛ يُرجى إلغاء أحدها أولًا.",
        "hi": "पहले से 100 रिमाइंडर बाकी हैं; पहले इनमें से एक रद्द कीजिए।",
        "zh": "已经有100个提醒在排队了；请先取消一个。",
        "ja": "すでに100件のリマインダーが待機中です。先に1件取り消してください。",
        "ko": "이미 대기 중인 알림이 100개 있어요. 먼저 하나를 취소해 주세요.",
    },
    "never": {
        "en": "That repeating time never comes.",
        "pt": "Essa repetição nunca acontece.",
        "es": "Esa repetición nunca llega.",
        "fr": "Cette répétition n'arrive jamais.",
        "de": "Diese Wiederholung kommt nie vor.",
        "it": "Quella ripetizione non arriva mai.",
        "nl": "Dat herhaalde tijdstip komt nooit.",
        "pl": "Ten powtarzający się termin nigdy nie nadejdzie.",
        "tr": "Bu tekrar hiçbir zaman gerçekleşmiyor.",
        "id": "Waktu berulang itu tidak pernah tiba.",
        "vi": "Thời điểm lặp lại đó sẽ không bao giờ đến.",
        "ru": "Такое повторение никогда не наступит.",
        "ar": "هذا التكرار لن يحين موعده أبدًا.",
        "hi": "यह दोहराव वाला समय कभी आता ही नहीं।",
        "zh": "这个重复时间永远不会到来。",
        "ja": "その繰り返しの日時は一度も来ません。",
        "ko": "그 반복 시간은 절대 오지 않아요.",
    },
    "unreadable": {
        "en": "That time cannot be read.",
        "pt": "Não consigo ler essa hora.",
        "es": "No puedo leer esa hora.",
        "fr": "Je ne peux pas lire cette heure.",
        "de": "Diese Zeit kann ich nicht lesen.",
        "it": "Non riesco a leggere quell'orario.",
        "nl": "Dat tijdstip kan ik niet lezen.",
        "pl": "Nie umiem odczytać tej godziny.",
        "tr": "Bu saati okuyamıyorum.",
        "id": "Saya tidak bisa membaca waktu itu.",
        "vi": "Mình không đọc được thời gian đó.",
        "ru": "Не могу разобрать это время.",
        "ar": "لا أستطيع قراءة هذا الوقت.",
        "hi": "मैं यह समय समझ नहीं पा रही।",
        "zh": "我看不懂这个时间。",
        "ja": "その時間は読み取れません。",
        "ko": "그 시간은 읽을 수 없어요.",
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
    said = phrase(ON_DAY, language).format(day=day, time=time)
    if language in _ON_TUESDAY and moment.weekday() == 1:
        before, tuesday = _ON_TUESDAY[language]
        said = said.replace(before, tuesday, 1)
    return said


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
        span = _span(unit, language, threshold=1 if whole_hours else 10)
        return phrase(EVERY_INTERVAL, language).format(interval=_every_span(span, language))
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
    indices = [_RULE_DAYS.index(day) for day in days]
    if language in _EVERY_DAY_FORMS:
        if len(indices) == 1:
            said = [_EVERY_DAY_FORMS[language][indices[0]]]
        else:
            said = [_SEVERAL_DAYS_FORMS[language][index] for index in indices]
    else:
        width = _DAY_NAME_WIDTH.get(language, "wide")
        names = get_day_names(width, locale=_locale(language))
        said = [_day_name(names[index], language) for index in indices]
    joined = _listed(said, language)
    if language == "pt" and days[0] in _PT_MASCULINE_DAYS:
        return f"todo {joined} às {time}"
    if language in _SEVERAL_DAYS_FORMS and len(indices) > 1:
        # "по понедельникам и средам"; Polish "we wtorki", else "w poniedziałki".
        joined = f"{'по' if language == 'ru' else 'we' if days[0] == 'TU' else 'w'} {joined}"
    return phrase(EVERY_WEEK_ON, language).format(days=joined, time=time)


def _day_name(name: str, language: str) -> str:
    if language == "ar":
        return name.removeprefix(_ARABIC_ARTICLE)
    if language == "tr":
        return name.lower()
    return name


def _listed(names: list[str], language: str) -> str:
    between, last_of_two, last_of_more = phrase(LIST_JOINS, language)
    if len(names) == 1:
        return names[0]
    last = last_of_two if len(names) == 2 else last_of_more
    return f"{between.join(names[:-1])}{last}{names[-1]}"


def lateness(late: timedelta, language: str = ENGLISH) -> str:
    """How late, in words: "25 minutes", "2 hours"."""
    return _span(late, language, threshold=2)


def _span(span: timedelta, language: str, threshold: float) -> str:
    """A span in CLDR's words; Japanese written without CLDR's space ("30分", not "30 分")."""
    said = format_timedelta(span, locale=_locale(language), threshold=threshold)
    return said.replace(" ", "") if language == "ja" else said


def _every_span(span: str, language: str) -> str:
    """A span as "every" takes it: Turkish in the locative, Arabic duals in the genitive."""
    if language == "tr":
        number, _, unit = span.rpartition(" ")
        return f"{number} {_TR_LOCATIVE.get(unit, unit)}".strip()
    if language == "ar":
        return _AR_GENITIVE_DUALS.get(span, span)
    return span


def _locale(language: str) -> str:
    return LOCALES.get(language, ENGLISH)
