"""The language a person writes in, told from their own recent messages.

Violet's fixed phrases and activity lines follow it. The detector is small and deterministic:
each word of the person's messages that is a common word of a language (articles, pronouns,
prepositions, everyday verbs and greetings) counts for that language, and letters only some of
the languages use (ã, ñ, ß, è...) count for those; the newest message counts twice, so a person
who changes language is followed at once. With no evidence at all, English.

Chosen over langdetect (a port of a character n-gram model, accurate on paragraphs but often
wrong on the short chat messages Violet gets, random unless seeded, and slower) and lingua
(accurate, but a 96 MB wheel in every image). The figures on held-aside sentences are in
docs/conversation.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TypeVar

T = TypeVar("T")

ENGLISH = "en"
LANGUAGES = (ENGLISH, "pt", "es", "fr", "de")
# Messages looked at, newest last; older ones say little about how the person writes now.
RECENT_MESSAGES = 5

_COMMON_WORDS = {
    "en": """
        the a an and or but is are was were be been am i you he she it we they my your his her
        our their me him us them this that these those what which who how when where why do
        does did have has had will would can could should of to in on at for with from by
        about not no yes please thanks thank hi hello hey just some any there here if so up out
        today tomorrow look find write send check note list email remember like need want know
        tell show get let make good morning evening weather
    """,
    "pt": """
        o os as um uma uns umas e é ou mas do da dos das em no na nos nas para pra por com sem
        não sim eu você vocês ele ela nós eles elas meu minha meus minhas seu sua isso isto esse
        essa este esta aquele como quando onde porque qual quem está estou estão são foi ser tem
        tenho ter vai vou pode obrigado obrigada olá oi tudo bem hoje amanhã mais muito também
        já ao à lembra lembre procure procura escreva envie mande preciso quero faz fazer dia
        sobre nota lista amanhã tempo bom boa
    """,
    "es": """
        el la los las un una unos unas y o pero es son está estoy están de del al en para por
        con sin que qué no sí yo tú usted él ella nosotros ellos mi mis tu tus su sus esto eso
        este esta ese esa cómo cuándo cuando dónde donde porque cuál quién hay tengo tiene
        puedes puede gracias hola hoy mañana más muy también ya me te se lo le les busca
        escribe envía manda necesito quiero hacer día bien sobre nota lista tiempo buenos buenas
    """,
    "fr": """
        le la les un une des et ou mais est sont suis être de du au aux en dans pour par avec
        sans sur que qui quoi ne pas non oui je j tu il elle nous vous ils elles mon ma mes ton
        ta tes son sa ses votre vos notre nos ce cette ces c ça comment quand où pourquoi quel
        quelle qu ai avez avons peux peut pouvez merci bonjour salut aujourd hui demain plus
        très aussi déjà me te se lui leur cherche écris envoie besoin veux voudrais faire jour
        bien n y note liste temps
    """,
    "de": """
        der die das den dem des ein eine einen einem einer und oder aber ist sind bin bist war
        sein von vom zu zum zur in im auf für mit ohne an am bei nach aus dass was wer wie wann
        wo warum welche nicht nein ja kein keine ich du er sie es wir ihr mein meine dein deine
        ihre unser mir mich dir dich uns euch ihnen habe hast hat haben kann kannst können bitte
        danke hallo heute morgen mehr sehr auch schon noch such suche schreib schreibe schick
        sende brauche möchte will machen tag gut guten wetter notiz liste über
    """,
}
COMMON_WORDS = {language: frozenset(words.split()) for language, words in _COMMON_WORDS.items()}
# The languages each common word counts for: one lookup a word instead of one a language.
_LANGUAGES_OF_WORD: dict[str, tuple[str, ...]] = {
    word: tuple(language for language in LANGUAGES if word in COMMON_WORDS[language])
    for word in frozenset().union(*COMMON_WORDS.values())
}
# Letters that only some of the languages write, and how much one counts for each.
_LETTER_WEIGHTS = {
    "ã": {"pt": 2},
    "õ": {"pt": 2},
    "ê": {"pt": 1, "fr": 1},
    "ç": {"pt": 1, "fr": 1},
    "ñ": {"es": 2},
    "¿": {"es": 2},
    "¡": {"es": 2},
    "è": {"fr": 2},
    "à": {"fr": 1, "pt": 1},
    "ù": {"fr": 2},
    "û": {"fr": 2},
    "î": {"fr": 2},
    "œ": {"fr": 2},
    "ä": {"de": 2},
    "ö": {"de": 2},
    "ü": {"de": 2},
    "ß": {"de": 2},
}
_WORD = re.compile(r"[^\W\d_]+")
_MARKED_LETTER = re.compile(f"[{''.join(_LETTER_WEIGHTS)}]")


def scores(text: str) -> dict[str, int]:
    """How much `text` looks like each language."""
    lowered = text.lower()
    tally = dict.fromkeys(LANGUAGES, 0)
    for word in _WORD.findall(lowered):
        for language in _LANGUAGES_OF_WORD.get(word, ()):
            tally[language] += 1
    for letter in _MARKED_LETTER.findall(lowered):
        for language, weight in _LETTER_WEIGHTS[letter].items():
            tally[language] += weight
    return tally


def detect(messages: Sequence[str], default: str = ENGLISH) -> str:
    """The language of the person's recent `messages` (oldest first); `default` when nothing
    in them tells. A tie goes to the language listed first in LANGUAGES."""
    recent = [message for message in messages if message.strip()][-RECENT_MESSAGES:]
    tally = dict.fromkeys(LANGUAGES, 0)
    for position, message in enumerate(recent):
        weight = 2 if position == len(recent) - 1 else 1
        for language, score in scores(message).items():
            tally[language] += weight * score
    best = max(LANGUAGES, key=lambda language: tally[language])
    return best if tally[best] > 0 else default


def phrase(translations: Mapping[str, T], language: str) -> T:
    """The phrase in `language`, or in English when it has no translation."""
    return translations.get(language) or translations[ENGLISH]
