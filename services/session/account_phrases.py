"""What Violet tells a person about their account, in their language: a key refused, a budget
nearly or fully spent, no key to talk with. Plain words; "Anthropic key" is the one name the
person needs, since it is what they bring."""

from __future__ import annotations

from violet.language import phrase
from violet.models.credentials import Hold, Payer

KEY_REFUSED = {
    "en": "Your Anthropic key was refused, so I've stopped using it.",
    "pt": "A sua chave da Anthropic foi recusada, por isso deixei de a usar.",
    "es": "Tu clave de Anthropic fue rechazada, así que he dejado de usarla.",
    "fr": "Votre clé Anthropic a été refusée, je ne l'utilise donc plus.",
    "de": "Ihr Anthropic-Schlüssel wurde abgelehnt, daher verwende ich ihn nicht mehr.",
}
AFTER_REFUSAL = {
    Payer.OPERATOR: {
        "en": "I'll carry on with Violet's own account until you add a new key on your key page.",
        "pt": "Continuo com a conta da Violet até adicionar uma nova chave na sua página da chave.",
        "es": "Seguiré con la cuenta de Violet hasta que añadas una clave nueva en tu página de "
        "la clave.",
        "fr": "Je continue avec le compte de Violet jusqu'à ce que vous ajoutiez une nouvelle clé "
        "sur votre page de clé.",
        "de": "Ich mache mit Violets eigenem Konto weiter, bis Sie auf Ihrer Schlüsselseite einen "
        "neuen Schlüssel hinterlegen.",
    },
    Payer.BUILT_IN: {
        "en": "Until you add a new key on your key page, I'll answer with my simpler built-in "
        "replies.",
        "pt": "Até adicionar uma nova chave na sua página da chave, respondo com as minhas "
        "respostas simples.",
        "es": "Hasta que añadas una clave nueva en tu página de la clave, responderé con mis "
        "respuestas sencillas.",
        "fr": "Jusqu'à ce que vous ajoutiez une nouvelle clé sur votre page de clé, je réponds "
        "avec mes réponses simples.",
        "de": "Bis Sie auf Ihrer Schlüsselseite einen neuen Schlüssel hinterlegen, antworte ich "
        "mit meinen einfachen Antworten.",
    },
    Payer.NOBODY: {
        "en": "To go on, add a working key on your key page.",
        "pt": "Para continuar, adicione uma chave que funcione na sua página da chave.",
        "es": "Para seguir, añade una clave que funcione en tu página de la clave.",
        "fr": "Pour continuer, ajoutez une clé qui fonctionne sur votre page de clé.",
        "de": "Um weiterzumachen, hinterlegen Sie auf Ihrer Schlüsselseite einen funktionierenden "
        "Schlüssel.",
    },
}
NEAR = {
    "day": {
        "en": "Just so you know: you've used most of today's allowance. At the limit I'll pause "
        "until tomorrow, and keep everything.",
        "pt": "Só para saber: já usou a maior parte do limite de hoje. No limite faço uma pausa "
        "até amanhã e guardo tudo.",
        "es": "Para que lo sepas: has usado casi todo el límite de hoy. Al llegar, pararé hasta "
        "mañana y lo guardaré todo.",
        "fr": "Pour information : vous avez utilisé presque toute la limite d'aujourd'hui. Une "
        "fois atteinte, je fais une pause jusqu'à demain et je garde tout.",
        "de": "Zur Info: Sie haben das heutige Kontingent fast aufgebraucht. Am Limit pausiere "
        "ich bis morgen und behalte alles.",
    },
    "month": {
        "en": "Just so you know: you've used most of this month's allowance. At the limit I'll "
        "pause until next month, and keep everything.",
        "pt": "Só para saber: já usou a maior parte do limite deste mês. No limite faço uma "
        "pausa até ao próximo mês e guardo tudo.",
        "es": "Para que lo sepas: has usado casi todo el límite de este mes. Al llegar, pararé "
        "hasta el mes que viene y lo guardaré todo.",
        "fr": "Pour information : vous avez utilisé presque toute la limite de ce mois. Une fois "
        "atteinte, je fais une pause jusqu'au mois prochain et je garde tout.",
        "de": "Zur Info: Sie haben das Kontingent dieses Monats fast aufgebraucht. Am Limit "
        "pausiere ich bis nächsten Monat und behalte alles.",
    },
}
HELD = {
    Hold.BUDGET_DAY: {
        "en": "You've reached today's limit, so I'm pausing until tomorrow. I've kept what you "
        "said, and anything I'm working on carries on then.",
        "pt": "Chegou ao limite de hoje, por isso faço uma pausa até amanhã. Guardei o que disse, "
        "e o que estou a fazer continua nessa altura.",
        "es": "Has llegado al límite de hoy, así que paro hasta mañana. He guardado lo que has "
        "dicho, y lo que estoy haciendo seguirá entonces.",
        "fr": "Vous avez atteint la limite d'aujourd'hui, je fais donc une pause jusqu'à demain. "
        "J'ai gardé ce que vous avez dit, et ce que je fais reprendra à ce moment-là.",
        "de": "Sie haben das heutige Limit erreicht, daher pausiere ich bis morgen. Was Sie "
        "gesagt haben, ist gespeichert, und meine laufenden Aufgaben gehen dann weiter.",
    },
    Hold.BUDGET_MONTH: {
        "en": "You've reached this month's limit, so I'm pausing until next month. I've kept "
        "what you said, and anything I'm working on carries on then.",
        "pt": "Chegou ao limite deste mês, por isso faço uma pausa até ao próximo mês. Guardei o "
        "que disse, e o que estou a fazer continua nessa altura.",
        "es": "Has llegado al límite de este mes, así que paro hasta el mes que viene. He "
        "guardado lo que has dicho, y lo que estoy haciendo seguirá entonces.",
        "fr": "Vous avez atteint la limite de ce mois, je fais donc une pause jusqu'au mois "
        "prochain. J'ai gardé ce que vous avez dit, et ce que je fais reprendra alors.",
        "de": "Sie haben das Limit dieses Monats erreicht, daher pausiere ich bis nächsten "
        "Monat. Was Sie gesagt haben, ist gespeichert, und meine Aufgaben gehen dann weiter.",
    },
    Hold.NO_KEY: {
        "en": "To talk with me, add your own Anthropic key on your key page (in the chat, type "
        "/key). I've kept what you said.",
        "pt": "Para falar comigo, adicione a sua chave da Anthropic na sua página da chave (no "
        "chat, escreva /key). Guardei o que disse.",
        "es": "Para hablar conmigo, añade tu propia clave de Anthropic en tu página de la clave "
        "(en el chat, escribe /key). He guardado lo que has dicho.",
        "fr": "Pour me parler, ajoutez votre propre clé Anthropic sur votre page de clé (dans le "
        "chat, tapez /key). J'ai gardé ce que vous avez dit.",
        "de": "Um mit mir zu sprechen, hinterlegen Sie Ihren eigenen Anthropic-Schlüssel auf "
        "Ihrer Schlüsselseite (im Chat: /key). Was Sie gesagt haben, ist gespeichert.",
    },
}
KEY_STATE = {
    "none": {
        "en": "You have no Anthropic key of your own here.",
        "pt": "Não tem aqui uma chave da Anthropic sua.",
        "es": "No tienes aquí una clave de Anthropic propia.",
        "fr": "Vous n'avez pas ici de clé Anthropic à vous.",
        "de": "Sie haben hier keinen eigenen Anthropic-Schlüssel.",
    },
    "yours": {
        "en": "Your own Anthropic key ending in {ending} is in use. This month: ${month:.2f}.",
        "pt": "A sua chave da Anthropic terminada em {ending} está em uso. Este mês: ${month:.2f}.",
        "es": "Se usa tu clave de Anthropic que termina en {ending}. Este mes: ${month:.2f}.",
        "fr": "Votre clé Anthropic se terminant par {ending} est utilisée. Ce mois-ci : "
        "{month:.2f} $.",
        "de": "Ihr Anthropic-Schlüssel mit der Endung {ending} wird verwendet. Diesen Monat: "
        "{month:.2f} $.",
    },
    "refused": {
        "en": "Your Anthropic key ending in {ending} was refused and is not used. Add a new one "
        "to use your own account again.",
        "pt": "A sua chave da Anthropic terminada em {ending} foi recusada e não é usada. "
        "Adicione uma nova para voltar a usar a sua conta.",
        "es": "Tu clave de Anthropic que termina en {ending} fue rechazada y no se usa. Añade "
        "una nueva para volver a usar tu cuenta.",
        "fr": "Votre clé Anthropic se terminant par {ending} a été refusée et n'est pas utilisée. "
        "Ajoutez-en une nouvelle pour utiliser à nouveau votre compte.",
        "de": "Ihr Anthropic-Schlüssel mit der Endung {ending} wurde abgelehnt und wird nicht "
        "verwendet. Hinterlegen Sie einen neuen, um Ihr Konto wieder zu nutzen.",
    },
}
NOT_KEPT = {
    "refused": {
        "en": "Anthropic refused that key, so I didn't keep it. Nothing else changed.",
        "pt": "A Anthropic recusou essa chave, por isso não a guardei. Nada mais mudou.",
        "es": "Anthropic rechazó esa clave, así que no la he guardado. Nada más ha cambiado.",
        "fr": "Anthropic a refusé cette clé, je ne l'ai donc pas gardée. Rien d'autre n'a changé.",
        "de": "Anthropic hat diesen Schlüssel abgelehnt, daher habe ich ihn nicht gespeichert. "
        "Sonst hat sich nichts geändert.",
    },
    "unchecked": {
        "en": "I couldn't check that key with Anthropic just now, so I didn't keep it. Please "
        "try again in a moment.",
        "pt": "Não consegui verificar essa chave com a Anthropic agora, por isso não a guardei. "
        "Tente de novo daqui a pouco.",
        "es": "No he podido comprobar esa clave con Anthropic ahora, así que no la he guardado. "
        "Inténtalo de nuevo en un momento.",
        "fr": "Je n'ai pas pu vérifier cette clé auprès d'Anthropic, je ne l'ai donc pas gardée. "
        "Réessayez dans un instant.",
        "de": "Ich konnte diesen Schlüssel gerade nicht bei Anthropic prüfen und habe ihn daher "
        "nicht gespeichert. Bitte versuchen Sie es gleich noch einmal.",
    },
    "empty": {
        "en": "That was empty: paste your whole Anthropic key.",
        "pt": "Veio vazio: cole a sua chave da Anthropic inteira.",
        "es": "Estaba vacío: pega tu clave de Anthropic completa.",
        "fr": "C'était vide : collez votre clé Anthropic en entier.",
        "de": "Das war leer: Fügen Sie Ihren ganzen Anthropic-Schlüssel ein.",
    },
}


def notice_phrase(notice: str, payer: Payer, language: str) -> str:
    """A notice (`session.accounts`) in words: `key_refused:WHEN` or `near:day|month:WHEN`."""
    kind, _, rest = notice.partition(":")
    if kind == "near":
        return phrase(NEAR[rest.partition(":")[0]], language)
    after = AFTER_REFUSAL.get(payer)
    refused = phrase(KEY_REFUSED, language)
    return f"{refused} {phrase(after, language)}" if after else refused


def held_phrase(hold: Hold, language: str) -> str:
    return phrase(HELD[hold], language)


def state_phrase(key: str, ending: str, month_usd: float, language: str) -> str:
    return phrase(KEY_STATE[key], language).format(ending=ending, month=month_usd)


def not_kept_phrase(reason: str, language: str) -> str:
    return phrase(NOT_KEPT.get(reason, NOT_KEPT["unchecked"]), language)
