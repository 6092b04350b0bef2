"""What a notification says, in the person's language and in plain words.

Without previews it says only that something waits and of what kind, never what: a locked
screen shows it to anyone. With previews it shows the newest of Violet's messages it is about,
shortened. Its tag is the newest message's seq, so a group sent again replaces itself on the
device instead of showing twice; tapping it opens the conversation at the oldest.

The person is addressed as `violet.language` says. A count stands where no plural form hangs
on it: Polish, Russian and Arabic give it after a colon.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from session.notify.outbox import Pending
from violet.language import phrase
from violet.push import Notice

TITLE = "Violet"
PREVIEW_CHARS = 180

# One of a kind, by kind; several of a kind, or of different kinds, by count.
ONE: Mapping[str, Mapping[str, str]] = {
    "result": {
        "en": "Violet finished something for you.",
        "pt": "A Violet terminou uma coisa para você.",
        "es": "Violet ha terminado algo para ti.",
        "fr": "Violet a terminé quelque chose pour vous.",
        "de": "Violet ist mit etwas für Sie fertig.",
        "it": "Violet ha finito una cosa per te.",
        "nl": "Violet heeft iets voor je afgerond.",
        "pl": "Violet skończyła coś dla ciebie.",
        "tr": "Violet sizin için bir şeyi tamamladı.",
        "id": "Violet sudah menyelesaikan sesuatu untuk Anda.",
        "vi": "Violet đã làm xong một việc cho bạn.",
        "ru": "Violet кое-что для вас закончила.",
        "ar": "انتهت Violet من مهمة لك.",
        "hi": "Violet ने आपके लिए एक काम पूरा कर लिया है।",
        "zh": "Violet 帮你完成了一件事。",
        "ja": "Violetが作業を一つ終えました。",
        "ko": "Violet이 부탁하신 일을 하나 끝냈어요.",
    },
    "approval": {
        "en": "Violet needs your OK before she goes on.",
        "pt": "A Violet precisa do seu OK para continuar.",
        "es": "Violet necesita tu visto bueno para seguir.",
        "fr": "Violet a besoin de votre accord pour continuer.",
        "de": "Violet braucht Ihr OK, um weiterzumachen.",
        "it": "Violet ha bisogno del tuo OK per andare avanti.",
        "nl": "Violet heeft je akkoord nodig om verder te gaan.",
        "pl": "Violet potrzebuje twojej zgody, żeby działać dalej.",
        "tr": "Violet'in devam etmeden önce onayınıza ihtiyacı var.",
        "id": "Violet perlu persetujuan Anda sebelum melanjutkan.",
        "vi": "Violet cần bạn đồng ý trước khi làm tiếp.",
        "ru": "Violet нужно ваше согласие, чтобы продолжить.",
        "ar": "تحتاج Violet إلى موافقتك قبل المتابعة.",
        "hi": "आगे बढ़ने से पहले Violet को आपकी मंज़ूरी चाहिए।",
        "zh": "Violet 需要你的同意才能继续。",
        "ja": "Violetが先に進むには、あなたのOKが必要です。",
        "ko": "Violet이 계속하려면 확인이 필요해요.",
    },
    "reminder": {
        "en": "Violet has a reminder for you.",
        "pt": "A Violet tem um lembrete para você.",
        "es": "Violet tiene un recordatorio para ti.",
        "fr": "Violet a un rappel pour vous.",
        "de": "Violet hat eine Erinnerung für Sie.",
        "it": "Violet ha un promemoria per te.",
        "nl": "Violet heeft een herinnering voor je.",
        "pl": "Violet ma dla ciebie przypomnienie.",
        "tr": "Violet'in size bir hatırlatması var.",
        "id": "Violet punya pengingat untuk Anda.",
        "vi": "Violet có một lời nhắc cho bạn.",
        "ru": "У Violet есть для вас напоминание.",
        "ar": "لدى Violet تذكير لك.",
        "hi": "Violet के पास आपके लिए एक रिमाइंडर है।",
        "zh": "Violet 有一条提醒给你。",
        "ja": "Violetからリマインダーが届いています。",
        "ko": "Violet이 보낸 리마인더가 있어요.",
    },
    "check_in": {
        "en": "Violet has a question for you.",
        "pt": "A Violet tem uma pergunta para você.",
        "es": "Violet tiene una pregunta para ti.",
        "fr": "Violet a une question pour vous.",
        "de": "Violet hat eine Frage an Sie.",
        "it": "Violet ha una domanda per te.",
        "nl": "Violet heeft een vraag voor je.",
        "pl": "Violet ma do ciebie pytanie.",
        "tr": "Violet'in size bir sorusu var.",
        "id": "Violet punya pertanyaan untuk Anda.",
        "vi": "Violet có một câu hỏi cho bạn.",
        "ru": "У Violet есть к вам вопрос.",
        "ar": "لدى Violet سؤال لك.",
        "hi": "Violet आपसे कुछ पूछना चाहती है।",
        "zh": "Violet 有个问题想问你。",
        "ja": "Violetから質問があります。",
        "ko": "Violet이 물어볼 게 있어요.",
    },
}
SEVERAL: Mapping[str, str] = {
    "en": "Violet has {count} new messages for you.",
    "pt": "A Violet tem {count} mensagens novas para você.",
    "es": "Violet tiene {count} mensajes nuevos para ti.",
    "fr": "Violet a {count} nouveaux messages pour vous.",
    "de": "Violet hat {count} neue Nachrichten für Sie.",
    "it": "Violet ha {count} nuovi messaggi per te.",
    "nl": "Violet heeft {count} nieuwe berichten voor je.",
    "pl": "Violet ma dla ciebie nowe wiadomości: {count}.",
    "tr": "Violet'in size {count} yeni mesajı var.",
    "id": "Violet punya {count} pesan baru untuk Anda.",
    "vi": "Violet có {count} tin nhắn mới cho bạn.",
    "ru": "У Violet для вас новые сообщения: {count}.",
    "ar": "لدى Violet رسائل جديدة لك: {count}.",
    "hi": "Violet के पास आपके लिए {count} नए संदेश हैं।",
    "zh": "Violet 有 {count} 条新消息给你。",
    "ja": "Violetから新しいメッセージが{count}件届いています。",
    "ko": "Violet이 보낸 새 메시지가 {count}개 있어요.",
}
AND_MORE: Mapping[str, str] = {
    "en": "(and {count} more)",
    "pt": "(e mais {count})",
    "es": "(y {count} más)",
    "fr": "(et {count} de plus)",
    "de": "(und {count} weitere)",
    "it": "(e altri {count})",
    "nl": "(en nog {count})",
    "pl": "(i jeszcze {count})",
    "tr": "(ve {count} mesaj daha)",
    "id": "(dan {count} lainnya)",
    "vi": "(và {count} tin nữa)",
    "ru": "(и ещё {count})",
    "ar": "(و{count} أخرى)",
    "hi": "(और {count} संदेश)",
    "zh": "（还有 {count} 条）",
    "ja": "（ほか{count}件）",
    "ko": "(외 {count}개)",
}


def notice(
    group: Sequence[Pending], language: str, previews: bool, texts: Mapping[int, str]
) -> Notice:
    """The notification of a group of pending messages (oldest first); `texts` holds Violet's
    words by seq, used only with previews."""
    oldest, newest = group[0].seq, group[-1].seq
    newest_text = " ".join(texts.get(newest, "").split())
    if previews and newest_text:
        body = _shortened(newest_text)
        if len(group) > 1:
            body = f"{body} {phrase(AND_MORE, language).format(count=len(group) - 1)}"
    elif len(group) == 1:
        body = phrase(ONE.get(group[0].kind, ONE["result"]), language)
    else:
        body = phrase(SEVERAL, language).format(count=len(group))
    return Notice(title=TITLE, body=body, seq=oldest, tag=f"violet-{newest}")


def _shortened(text: str) -> str:
    if len(text) <= PREVIEW_CHARS:
        return text
    return text[: PREVIEW_CHARS - 1].rstrip() + "…"
