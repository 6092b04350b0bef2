"""The offline model's work reports, in each language Violet follows (`violet.language`): what a
work session made, or what failed and why. Each is a template; the names in braces are filled
with the quoted material (a title, a sentence, an address), which keeps its own words.

French and German address the person formally (vous, Sie); Portuguese and Spanish as a friend
would (você, tú).
"""

from __future__ import annotations

from collections.abc import Mapping

Template = Mapping[str, str]

FINISHED: Template = {
    "en": "That's finished.",
    "pt": "Pronto, está feito.",
    "es": "Listo, ya está hecho.",
    "fr": "C'est terminé.",
    "de": "Das ist erledigt.",
}
NO_RESULT: Template = {
    "en": "I couldn't finish that: no result came back.",
    "pt": "Não consegui terminar isso: nenhum resultado voltou.",
    "es": "No pude terminar eso: no llegó ningún resultado.",
    "fr": "Je n'ai pas pu terminer : aucun résultat n'est revenu.",
    "de": "Das konnte ich nicht abschließen: Es kam kein Ergebnis zurück.",
}
DID_NOT_WORK: Template = {
    "en": "That didn't work: {why}",
    "pt": "Não deu certo: {why}",
    "es": "No funcionó: {why}",
    "fr": "Cela n'a pas marché : {why}",
    "de": "Das hat nicht geklappt: {why}",
}

PAGE_SAYS: Template = {
    "en": 'The page "{title}" says: {sentence}',
    "pt": 'A página "{title}" diz: {sentence}',
    "es": 'La página "{title}" dice: {sentence}',
    "fr": "La page « {title} » dit : {sentence}",
    "de": "Auf der Seite „{title}“ steht: {sentence}",
}
UNTITLED_PAGE_SAYS: Template = {
    "en": "The page at {url} says: {sentence}",
    "pt": "A página em {url} diz: {sentence}",
    "es": "La página de {url} dice: {sentence}",
    "fr": "La page {url} dit : {sentence}",
    "de": "Auf der Seite {url} steht: {sentence}",
}
PAGE_EMPTY: Template = {
    "en": 'The page "{title}" has no text.',
    "pt": 'A página "{title}" não tem texto.',
    "es": 'La página "{title}" no tiene texto.',
    "fr": "La page « {title} » ne contient pas de texte.",
    "de": "Die Seite „{title}“ enthält keinen Text.",
}
UNTITLED_PAGE_EMPTY: Template = {
    "en": "The page at {url} has no text.",
    "pt": "A página em {url} não tem texto.",
    "es": "La página de {url} no tiene texto.",
    "fr": "La page {url} ne contient pas de texte.",
    "de": "Die Seite {url} enthält keinen Text.",
}
PAGE_FAILED: Template = {
    "en": "I couldn't open {url}: {why}",
    "pt": "Não consegui abrir {url}: {why}",
    "es": "No pude abrir {url}: {why}",
    "fr": "Je n'ai pas pu ouvrir {url} : {why}",
    "de": "Ich konnte {url} nicht öffnen: {why}",
}

# A document as the person's own, by its kind: "note", "list", or neither. Written as a noun
# phrase with its possessive, so each language's agreement is in one place.
KINDS: Mapping[str, Template] = {
    "note": {
        "en": "your note",
        "pt": "sua nota",
        "es": "tu nota",
        "fr": "votre note",
        "de": "Ihre Notiz",
    },
    "list": {
        "en": "your list",
        "pt": "sua lista",
        "es": "tu lista",
        "fr": "votre liste",
        "de": "Ihre Liste",
    },
    "document": {
        "en": "your document",
        "pt": "seu documento",
        "es": "tu documento",
        "fr": "votre document",
        "de": "Ihr Dokument",
    },
}
DOCUMENT_SAYS: Template = {
    "en": '{Kind} "{title}" says: {sentence}',
    "pt": '{Kind} "{title}" diz: {sentence}',
    "es": '{Kind} "{title}" dice: {sentence}',
    "fr": "{Kind} « {title} » dit : {sentence}",
    "de": "{Kind} „{title}“ beginnt so: {sentence}",
}
DOCUMENT_EMPTY: Template = {
    "en": '{Kind} "{title}" is empty.',
    "pt": '{Kind} "{title}" não tem nada escrito.',
    "es": '{Kind} "{title}" no tiene nada escrito.',
    "fr": "{Kind} « {title} » ne contient rien.",
    "de": "{Kind} „{title}“ ist leer.",
}
READING_FAILED: Template = {
    "en": 'I couldn\'t read "{title}": {why}',
    "pt": 'Não consegui ler "{title}": {why}',
    "es": 'No pude leer "{title}": {why}',
    "fr": "Je n'ai pas pu lire « {title} » : {why}",
    "de": "Ich konnte „{title}“ nicht lesen: {why}",
}
# Where to open it: the Documents of the web page and of `violet chat`.
WROTE: Template = {
    "en": 'I wrote {kind} "{title}"; you\'ll find it under Documents.',
    "pt": 'Escrevi {kind} "{title}"; você encontra em Documentos.',
    "es": 'Escribí {kind} "{title}"; está en Documentos.',
    "fr": "J'ai écrit {kind} « {title} » ; à retrouver dans Documents.",
    "de": "Ich habe {kind} „{title}“ geschrieben; zu finden unter Dokumente.",
}
WRITING_FAILED: Template = {
    "en": 'I couldn\'t write {kind} "{title}": {why}',
    "pt": 'Não consegui escrever {kind} "{title}": {why}',
    "es": 'No pude escribir {kind} "{title}": {why}',
    "fr": "Je n'ai pas pu écrire {kind} « {title} » : {why}",
    "de": "Ich konnte {kind} „{title}“ nicht schreiben: {why}",
}

CALCULATED: Template = {
    "en": "The result of {expr} is {value}.",
    "pt": "O resultado de {expr} é {value}.",
    "es": "El resultado de {expr} es {value}.",
    "fr": "Le résultat de {expr} est {value}.",
    "de": "Das Ergebnis von {expr} ist {value}.",
}
CALCULATION_FAILED: Template = {
    "en": "I couldn't calculate {expr}: {why}",
    "pt": "Não consegui calcular {expr}: {why}",
    "es": "No pude calcular {expr}: {why}",
    "fr": "Je n'ai pas pu calculer {expr} : {why}",
    "de": "Ich konnte {expr} nicht ausrechnen: {why}",
}

SENT: Template = {
    "en": "Sent the email to {to}.",
    "pt": "Enviei o e-mail para {to}.",
    "es": "Envié el correo a {to}.",
    "fr": "J'ai envoyé l'e-mail à {to}.",
    "de": "Ich habe die E-Mail an {to} geschickt.",
}
NOT_SENT: Template = {
    "en": "As you asked, I didn't send the email to {to}.",
    "pt": "Como você pediu, não enviei o e-mail para {to}.",
    "es": "Como pediste, no envié el correo a {to}.",
    "fr": "Comme vous me l'avez demandé, je n'ai pas envoyé l'e-mail à {to}.",
    "de": "Wie gewünscht habe ich die E-Mail an {to} nicht geschickt.",
}
SENDING_FAILED: Template = {
    "en": "I couldn't send the email to {to}: {why}",
    "pt": "Não consegui enviar o e-mail para {to}: {why}",
    "es": "No pude enviar el correo a {to}: {why}",
    "fr": "Je n'ai pas pu envoyer l'e-mail à {to} : {why}",
    "de": "Ich konnte die E-Mail an {to} nicht schicken: {why}",
}

FOUND: Template = {
    "en": 'The top result for "{query}" is "{title}"{where}{ending}',
    "pt": 'O primeiro resultado para "{query}" é "{title}"{where}{ending}',
    "es": 'El primer resultado para "{query}" es "{title}"{where}{ending}',
    "fr": "Le premier résultat pour « {query} » est « {title} »{where}{ending}",
    "de": "Der erste Treffer für „{query}“ ist „{title}“{where}{ending}",
}
FOUND_NOTHING: Template = {
    "en": 'I found nothing for "{query}".',
    "pt": 'Não encontrei nada para "{query}".',
    "es": 'No encontré nada para "{query}".',
    "fr": "Je n'ai rien trouvé pour « {query} ».",
    "de": "Zu „{query}“ habe ich nichts gefunden.",
}
SEARCH_FAILED: Template = {
    "en": 'I couldn\'t search for "{query}": {why}',
    "pt": 'Não consegui pesquisar "{query}": {why}',
    "es": 'No pude buscar "{query}": {why}',
    "fr": "Je n'ai pas pu chercher « {query} » : {why}",
    "de": "Ich konnte nicht nach „{query}“ suchen: {why}",
}

# Another task's question, answered from the work asked: what it found, or that it has nothing.
FOUND_SO_FAR: Template = {
    "en": 'It found: "{quote}"',
    "pt": 'Encontrou isto: "{quote}"',
    "es": 'Encontró esto: "{quote}"',
    "fr": "Voici ce qu'il a trouvé : « {quote} »",
    "de": "Gefunden wurde: „{quote}“",
}
NOTHING_FOUND_YET: Template = {
    "en": "It has found nothing on that yet.",
    "pt": "Ainda não encontrou nada sobre isso.",
    "es": "Todavía no ha encontrado nada sobre eso.",
    "fr": "Il n'a encore rien trouvé à ce sujet.",
    "de": "Dazu wurde noch nichts gefunden.",
}
# That answer, told by the work that asked: information from the other work, in its words.
OTHER_WORK_ANSWERED: Template = {
    "en": 'I asked your other work, "{source}". {answer}',
    "pt": 'Perguntei ao seu outro pedido, "{source}". {answer}',
    "es": 'Pregunté a tu otra petición, "{source}". {answer}',
    "fr": "J'ai demandé à votre autre demande, « {source} ». {answer}",
    "de": "Ich habe bei Ihrer anderen Anfrage „{source}“ nachgefragt. {answer}",
}
OTHER_WORK_UNDER_WAY: Template = {
    "en": " That work is still under way.",
    "pt": " Esse pedido ainda está em andamento.",
    "es": " Esa petición todavía está en curso.",
    "fr": " Cette demande est encore en cours.",
    "de": " Diese Anfrage läuft noch.",
}
ASK_FAILED: Template = {
    "en": "I couldn't get an answer from your other work: {why}",
    "pt": "Não consegui uma resposta do seu outro pedido: {why}",
    "es": "No conseguí una respuesta de tu otra petición: {why}",
    "fr": "Je n'ai pas pu obtenir de réponse de votre autre demande : {why}",
    "de": "Von Ihrer anderen Anfrage habe ich keine Antwort bekommen: {why}",
}

# Reasons, each the clause after a colon. The worker's own refusals come in English; the ones
# known here are told in the person's language, any other stays as the tool gave it.
REASONS: Mapping[str, Template] = {
    "something went wrong.": {
        "pt": "algo deu errado.",
        "es": "algo salió mal.",
        "fr": "quelque chose s'est mal passé.",
        "de": "etwas ist schiefgegangen.",
    },
    "it divides by zero.": {
        "pt": "há uma divisão por zero.",
        "es": "hay una división por cero.",
        "fr": "il y a une division par zéro.",
        "de": "es wird durch null geteilt.",
    },
    "it isn't a sum I can work out.": {
        "pt": "não é uma conta que eu consiga fazer.",
        "es": "no es una cuenta que pueda resolver.",
        "fr": "ce n'est pas un calcul que je sais faire.",
        "de": "das ist keine Rechnung, die ich lösen kann.",
    },
    "sending email is not set up here.": {
        "pt": "o envio de e-mails não está configurado aqui.",
        "es": "el envío de correos no está configurado aquí.",
        "fr": "l'envoi d'e-mails n'est pas configuré ici.",
        "de": "der E-Mail-Versand ist hier nicht eingerichtet.",
    },
    "the mail server is not set up correctly.": {
        "pt": "o servidor de e-mail não está configurado corretamente.",
        "es": "el servidor de correo no está bien configurado.",
        "fr": "le serveur de messagerie n'est pas bien configuré.",
        "de": "der Mailserver ist nicht richtig eingerichtet.",
    },
    "the mail server refused it.": {
        "pt": "o servidor de e-mail recusou.",
        "es": "el servidor de correo lo rechazó.",
        "fr": "le serveur de messagerie l'a refusé.",
        "de": "der Mailserver hat sie abgelehnt.",
    },
    "the mail server could not be reached just now.": {
        "pt": "não foi possível falar com o servidor de e-mail agora.",
        "es": "no se pudo contactar con el servidor de correo ahora mismo.",
        "fr": "le serveur de messagerie est injoignable pour le moment.",
        "de": "der Mailserver war gerade nicht erreichbar.",
    },
    "only http and https pages can be opened.": {
        "pt": "só consigo abrir páginas http e https.",
        "es": "solo puedo abrir páginas http y https.",
        "fr": "seules les pages http et https peuvent être ouvertes.",
        "de": "nur http- und https-Seiten lassen sich öffnen.",
    },
    "searching the web is not set up here.": {
        "pt": "a pesquisa na web não está configurada aqui.",
        "es": "la búsqueda en la web no está configurada aquí.",
        "fr": "la recherche sur le web n'est pas configurée ici.",
        "de": "die Websuche ist hier nicht eingerichtet.",
    },
    "no other work is about that.": {
        "pt": "nenhum outro pedido trata disso.",
        "es": "ninguna otra petición trata de eso.",
        "fr": "aucune autre demande ne porte là-dessus.",
        "de": "keine andere Anfrage handelt davon.",
    },
    "the other work could not be reached just now.": {
        "pt": "não foi possível falar com o outro pedido agora.",
        "es": "no se pudo llegar a la otra petición ahora mismo.",
        "fr": "l'autre demande est injoignable pour le moment.",
        "de": "die andere Anfrage war gerade nicht erreichbar.",
    },
    "the other work could not answer just now.": {
        "pt": "o outro pedido não conseguiu responder agora.",
        "es": "la otra petición no pudo responder ahora mismo.",
        "fr": "l'autre demande n'a pas pu répondre pour le moment.",
        "de": "die andere Anfrage konnte gerade nicht antworten.",
    },
    "the search did not answer just now.": {
        "pt": "a pesquisa não respondeu agora.",
        "es": "la búsqueda no respondió ahora mismo.",
        "fr": "la recherche n'a pas répondu pour le moment.",
        "de": "die Suche hat gerade nicht geantwortet.",
    },
}


def report(template: Template, language: str, **fields: str) -> str:
    """The template in `language` (English when it has none), filled."""
    return (template.get(language) or template["en"]).format(**fields)


def document_told(template: Template, language: str, kind: str, **fields: str) -> str:
    """A template about one of the person's documents, its kind ("note", "list", "document")
    told in `language`."""
    phrase = KINDS[kind].get(language) or KINDS[kind]["en"]
    return report(template, language, kind=phrase, Kind=phrase[:1].upper() + phrase[1:], **fields)


def reason_in(reason: str, language: str) -> str:
    """A reason clause in `language` when it is one known here, else as it is."""
    return REASONS.get(reason.lower(), {}).get(language, reason)
