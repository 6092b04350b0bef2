"""What a notification says, in the person's language and in plain words.

Without previews it says only that something waits and of what kind, never what: a locked
screen shows it to anyone. With previews it shows the newest of Violet's messages it is about,
shortened. Its tag is the newest message's seq, so a group sent again replaces itself on the
device instead of showing twice; tapping it opens the conversation at the oldest.
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
    },
    "approval": {
        "en": "Violet needs your OK before she goes on.",
        "pt": "A Violet precisa do seu OK para continuar.",
        "es": "Violet necesita tu visto bueno para seguir.",
        "fr": "Violet a besoin de votre accord pour continuer.",
        "de": "Violet braucht Ihr OK, um weiterzumachen.",
    },
    "reminder": {
        "en": "Violet has a reminder for you.",
        "pt": "A Violet tem um lembrete para você.",
        "es": "Violet tiene un recordatorio para ti.",
        "fr": "Violet a un rappel pour vous.",
        "de": "Violet hat eine Erinnerung für Sie.",
    },
    "check_in": {
        "en": "Violet has a question for you.",
        "pt": "A Violet tem uma pergunta para você.",
        "es": "Violet tiene una pregunta para ti.",
        "fr": "Violet a une question pour vous.",
        "de": "Violet hat eine Frage an Sie.",
    },
}
SEVERAL: Mapping[str, str] = {
    "en": "Violet has {count} new messages for you.",
    "pt": "A Violet tem {count} mensagens novas para você.",
    "es": "Violet tiene {count} mensajes nuevos para ti.",
    "fr": "Violet a {count} nouveaux messages pour vous.",
    "de": "Violet hat {count} neue Nachrichten für Sie.",
}
AND_MORE: Mapping[str, str] = {
    "en": "(and {count} more)",
    "pt": "(e mais {count})",
    "es": "(y {count} más)",
    "fr": "(et {count} de plus)",
    "de": "(und {count} weitere)",
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
