"""The offline model's fixed phrases, in each language Violet follows (`violet.language`).

French and German address the person formally (vous, Sie); Portuguese and Spanish as a friend
would (você, tú).
"""

from __future__ import annotations

ON_IT = {
    "en": "I'm on it: I'll tell you as soon as it's done.",
    "pt": "Já estou cuidando disso: aviso você assim que estiver pronto.",
    "es": "Me pongo con ello: te aviso en cuanto esté listo.",
    "fr": "Je m'en occupe : je vous préviens dès que c'est fait.",
    "de": "Ich kümmere mich darum und sage Ihnen Bescheid, sobald es fertig ist.",
}
FRIENDLY = {
    "en": (
        "Thanks for telling me. Is there anything I can do for you?",
        "I'm here whenever you need me. Just say what you'd like.",
        "Good to hear from you! Let me know if I can help with something.",
        "All right. If you'd like me to look something up, just ask.",
        "I see. What else is on your mind?",
    ),
    "pt": (
        "Obrigada por me contar. Posso ajudar com alguma coisa?",
        "Estou aqui sempre que precisar. É só dizer o que gostaria.",
        "Que bom ter notícias suas! Me diga se posso ajudar com algo.",
        "Tudo bem. Se quiser que eu pesquise algo, é só pedir.",
        "Entendo. Em que mais você está pensando?",
    ),
    "es": (
        "Gracias por contármelo. ¿Puedo ayudarte con algo?",
        "Aquí estoy cuando me necesites. Solo dime qué te gustaría.",
        "¡Qué bien saber de ti! Dime si puedo ayudarte con algo.",
        "De acuerdo. Si quieres que busque algo, solo pídemelo.",
        "Entiendo. ¿Qué más tienes en mente?",
    ),
    "fr": (
        "Merci de me l'avoir dit. Puis-je faire quelque chose pour vous ?",
        "Je suis là dès que vous avez besoin de moi. Dites-moi ce que vous aimeriez.",
        "Ravie d'avoir de vos nouvelles ! Dites-moi si je peux vous aider.",
        "D'accord. Si vous voulez que je cherche quelque chose, demandez-moi.",
        "Je vois. Qu'avez-vous d'autre en tête ?",
    ),
    "de": (
        "Danke, dass Sie mir das sagen. Kann ich etwas für Sie tun?",
        "Ich bin da, wann immer Sie mich brauchen. Sagen Sie einfach, was Sie möchten.",
        "Schön, von Ihnen zu hören! Sagen Sie mir, wenn ich helfen kann.",
        "In Ordnung. Wenn ich etwas nachschlagen soll, fragen Sie einfach.",
        "Verstehe. Was beschäftigt Sie sonst noch?",
    ),
}
# For a question that is not about the person: never a thank-you.
ASKED = {
    "en": (
        "I'm not sure about that one. If you'd like, ask me to look it up and I'll find out.",
        "Good question! Ask me to look it up and I'll find out for you.",
        "I don't know that offhand, but I can look it up for you if you like.",
    ),
    "pt": (
        "Não tenho certeza sobre isso. Se quiser, peça para eu pesquisar e eu descubro.",
        "Boa pergunta! Peça para eu pesquisar e eu descubro para você.",
        "Não sei isso de cabeça, mas posso pesquisar para você se quiser.",
    ),
    "es": (
        "No estoy segura de eso. Si quieres, pídeme que lo busque y lo averiguo.",
        "¡Buena pregunta! Pídeme que lo busque y lo averiguo por ti.",
        "No lo sé de memoria, pero puedo buscarlo si quieres.",
    ),
    "fr": (
        "Je ne suis pas sûre. Si vous voulez, demandez-moi de chercher et je trouverai.",
        "Bonne question ! Demandez-moi de chercher et je trouverai pour vous.",
        "Je ne le sais pas de tête, mais je peux chercher si vous voulez.",
    ),
    "de": (
        "Da bin ich mir nicht sicher. Bitten Sie mich, es nachzuschlagen.",
        "Gute Frage! Bitten Sie mich, es nachzuschlagen, dann finde ich es für Sie heraus.",
        "Das weiß ich nicht auswendig, aber ich kann es gern für Sie nachschlagen.",
    ),
}
DONT_KNOW = {
    "en": "I don't know that yet. If you tell me, I'll remember it.",
    "pt": "Ainda não sei isso. Se você me contar, eu me lembro.",
    "es": "Todavía no lo sé. Si me lo cuentas, lo recordaré.",
    "fr": "Je ne le sais pas encore. Si vous me le dites, je m'en souviendrai.",
    "de": "Das weiß ich noch nicht. Wenn Sie es mir sagen, merke ich es mir.",
}
# Memory could not be checked this turn: not the same as not knowing.
CANT_CHECK = {
    "en": "I can't check what I remember about you right now. Please ask me again in a moment.",
    "pt": "Não consigo ver o que lembro sobre você agora. Pergunte de novo daqui a pouco.",
    "es": "Ahora mismo no puedo ver lo que recuerdo de ti. Pregúntamelo otra vez en un momento.",
    "fr": "Je ne peux pas vérifier ce dont je me souviens pour l'instant. "
    "Redemandez-moi dans un instant.",
    "de": "Ich kann gerade nicht nachsehen, was ich über Sie weiß. "
    "Fragen Sie mich bitte gleich noch einmal.",
}
WILL_REMEMBER = {
    "en": "Thanks, I'll remember that.",
    "pt": "Obrigada, vou me lembrar disso.",
    "es": "Gracias, lo recordaré.",
    "fr": "Merci, je m'en souviendrai.",
    "de": "Danke, das merke ich mir.",
}
# Followed by the remembered item in quotes.
REMEMBERED = {
    "en": "Here's what I remember: ",
    "pt": "Eis o que eu lembro: ",
    "es": "Esto es lo que recuerdo: ",
    "fr": "Voici ce dont je me souviens : ",
    "de": "Das weiß ich noch: ",
}
# A question about what Violet told: the record quoted with its day, then where it came from.
TOLD_BEFORE = {
    "en": 'On {day} I told you: "{text}"',
    "pt": 'Em {day} eu disse a você: "{text}"',
    "es": 'El {day} te dije: "{text}"',
    "fr": "Le {day}, je vous ai dit : « {text} »",
    "de": "Am {day} habe ich Ihnen gesagt: „{text}“",
}
TOLD_FROM = {
    "en": " That came from {source}.",
    "pt": " Isso veio de {source}.",
    "es": " Eso venía de {source}.",
    "fr": " Cela venait de {source}.",
    "de": " Das stammte von {source}.",
}
NOT_TOLD = {
    "en": "I can't find that among what I told you. Could you tell me a bit more about it?",
    "pt": "Não encontro isso no que eu disse a você. Pode me contar um pouco mais?",
    "es": "No lo encuentro entre lo que te dije. ¿Me cuentas un poco más?",
    "fr": "Je ne le retrouve pas dans ce que je vous ai dit. Pouvez-vous m'en dire un peu plus ?",
    "de": "Das finde ich nicht unter dem, was ich Ihnen gesagt habe. "
    "Können Sie mir etwas mehr dazu sagen?",
}
START_FAILED = {
    "en": "I couldn't start on that just now. Please try again in a moment.",
    "pt": "Não consegui começar isso agora. Tente de novo daqui a pouco.",
    "es": "No he podido empezar con eso ahora. Inténtalo de nuevo en un momento.",
    "fr": "Je n'ai pas pu m'y mettre tout de suite. Réessayez dans un instant.",
    "de": "Das konnte ich gerade nicht anfangen. Bitte versuchen Sie es gleich noch einmal.",
}
PASS_FAILED = {
    "en": "I couldn't pass that on just now. Please try again.",
    "pt": "Não consegui repassar isso agora. Tente de novo.",
    "es": "No he podido transmitirlo ahora. Inténtalo de nuevo.",
    "fr": "Je n'ai pas pu le transmettre pour l'instant. Réessayez.",
    "de": "Das konnte ich gerade nicht weitergeben. Bitte versuchen Sie es noch einmal.",
}
GOING_AHEAD = {
    "en": "All right, I'll go ahead.",
    "pt": "Certo, vou em frente.",
    "es": "De acuerdo, sigo adelante.",
    "fr": "D'accord, j'y vais.",
    "de": "In Ordnung, ich mache weiter.",
}
WONT = {
    "en": "All right, I won't.",
    "pt": "Certo, não vou fazer.",
    "es": "De acuerdo, no lo haré.",
    "fr": "D'accord, je ne le ferai pas.",
    "de": "In Ordnung, dann nicht.",
}
TAKEN_CARE_OF = {
    "en": "Good, that's taken care of.",
    "pt": "Ótimo, isso está resolvido.",
    "es": "Bien, eso ya está hecho.",
    "fr": "Bien, c'est réglé.",
    "de": "Gut, das ist erledigt.",
}
KEEP_IN_MIND = {
    "en": "I'll keep that in mind.",
    "pt": "Vou ter isso em mente.",
    "es": "Lo tendré en cuenta.",
    "fr": "Je le garde en tête.",
    "de": "Das behalte ich im Kopf.",
}
ALL_RIGHT = {
    "en": "All right.",
    "pt": "Certo.",
    "es": "De acuerdo.",
    "fr": "D'accord.",
    "de": "In Ordnung.",
}
# Reminders: {when} is said by `violet.when` ("today at 17:00", "every Monday at 07:30").
REMINDER_SET = {
    "en": "I'll remind you {when}: {text}",
    "pt": "Vou lembrar você {when}: {text}",
    "es": "Te lo recordaré {when}: {text}",
    "fr": "Je vous le rappellerai {when} : {text}",
    "de": "Ich erinnere Sie {when}: {text}",
}
WORK_SCHEDULED = {
    "en": "I'll do it {when}: {text}",
    "pt": "Vou fazer isso {when}: {text}",
    "es": "Lo haré {when}: {text}",
    "fr": "Je m'en occuperai {when} : {text}",
    "de": "Ich erledige das {when}: {text}",
}
REMINDER_REFUSED = {
    "en": "I couldn't set that reminder: {why}",
    "pt": "Não consegui criar esse lembrete: {why}",
    "es": "No he podido crear ese recordatorio: {why}",
    "fr": "Je n'ai pas pu créer ce rappel : {why}",
    "de": "Diese Erinnerung konnte ich nicht anlegen: {why}",
}
ASK_REMINDER_TIME = {
    "en": 'When should I remind you? Tell me a time, like "at 5 pm" or "tomorrow at 8".',
    "pt": 'Quando devo lembrar você? Diga uma hora, como "às 17h" ou "amanhã às 8".',
    "es": '¿Cuándo te lo recuerdo? Dime una hora, como "a las 17:00" o "mañana a las 8".',
    "fr": (
        "Quand dois-je vous le rappeler ? Donnez-moi une heure, comme « à 17h » ou « demain à 8h »."
    ),
    "de": "Wann soll ich Sie erinnern? Nennen Sie eine Zeit, etwa „um 17 Uhr“ oder „morgen um 8“.",
}
ASK_REMINDER_WHAT = {
    "en": "What should I remind you of?",
    "pt": "Do que devo lembrar você?",
    "es": "¿Qué quieres que te recuerde?",
    "fr": "De quoi dois-je vous faire penser ?",
    "de": "Woran soll ich Sie erinnern?",
}
YOUR_REMINDERS = {
    "en": "Your reminders:",
    "pt": "Os seus lembretes:",
    "es": "Tus recordatorios:",
    "fr": "Vos rappels :",
    "de": "Ihre Erinnerungen:",
}
NO_REMINDERS = {
    "en": "You have no reminders right now.",
    "pt": "Você não tem lembretes agora.",
    "es": "Ahora mismo no tienes recordatorios.",
    "fr": "Vous n'avez aucun rappel pour l'instant.",
    "de": "Sie haben gerade keine Erinnerungen.",
}
REMINDER_CANCELLED = {
    "en": "Done, I've cancelled it: {text}",
    "pt": "Pronto, cancelei: {text}",
    "es": "Hecho, lo he cancelado: {text}",
    "fr": "C'est fait, je l'ai annulé : {text}",
    "de": "Erledigt, ich habe sie gelöscht: {text}",
}
REMINDER_NOT_FOUND = {
    "en": "I couldn't find that reminder. Ask me what reminders you have to see them all.",
    "pt": "Não encontrei esse lembrete. Pergunte-me quais lembretes você tem para ver todos.",
    "es": "No he encontrado ese recordatorio. Pregúntame qué recordatorios tienes para verlos.",
    "fr": "Je n'ai pas trouvé ce rappel. Demandez-moi quels rappels vous avez pour les voir.",
    "de": (
        "Diese Erinnerung habe ich nicht gefunden. Fragen Sie mich, welche Erinnerungen Sie haben."
    ),
}
REMINDERS_UNAVAILABLE = {
    "en": "I can't look at your reminders just now. Could you ask again in a moment?",
    "pt": "Não consigo ver os seus lembretes agora. Pode perguntar de novo daqui a pouco?",
    "es": "Ahora mismo no puedo ver tus recordatorios. ¿Puedes preguntar en un momento?",
    "fr": (
        "Je ne peux pas voir vos rappels pour l'instant. Pouvez-vous redemander dans un instant ?"
    ),
    "de": "Ich kann Ihre Erinnerungen gerade nicht sehen. Fragen Sie bitte gleich noch einmal.",
}
