"""Questions about what Violet told the person, told apart from questions about the person.

What Violet told (her answers, and work results as she told them) is kept as "told" records.
They answer "what time did you say the ferry leaves?" and never "what is my PIN?": a page Violet
read out may say anything, and none of it is a fact about the person. The memory service gives
told records only for a question these rules let through, whatever its caller asks, and the
offline model answers from them only a question that asks what Violet said. One set of rules
serves both, so the two never disagree.

Questions about what was told are read in English phrasings, and in common ones of the other
languages Violet follows. The person speaking of themselves is read in each of them, so that a
question about the person never gets told records (the safe side).
"""

from __future__ import annotations

import re

from violet.language import ENGLISH, detect

# What Violet does that a person later asks about: said, found, suggested, wrote, worked out.
_VIOLET_DID = (
    r"say|said|tell|told|mention|mentioned|suggest|suggested|recommend|recommended|find|found"
    r"|write|wrote|written|send|sent|read|look\s+up|looked\s+up|work\s+out|worked\s+out|give|gave"
    r"|show|showed|quote|quoted|pick|picked|propose|proposed|come\s+up\s+with|came\s+up\s+with"
    r"|make|made|get|got|plan|planned|book|booked|put"
)
# Things Violet looked up or made, named as such: "that page", "the note", "the weather site".
_VIOLET_MADE = (
    r"page|web\s*page|article|site|website|link|note|list|document|doc|search|results?"
    r"|answer|sum|calculation|email|e-mail"
)
# The same in the other languages Violet follows: "você disse", "dijiste", "vous avez dit",
# "haben Sie gesagt", "a página", "la nota", "die Seite".
_OTHER_LANGUAGES = (
    r"\b(?:você\s+)?(?:disse|falou|encontrou|sugeriu|recomendou|escreveu|enviou|mandou)\b"
    r"|\b(?:dijiste|encontraste|sugeriste|recomendaste|escribiste|enviaste|mandaste)\b"
    r"|\b(?:vous\s+)?(?:m'avez|avez)\s+(?:dit|trouvé|suggéré|recommandé|écrit|envoyé)\b"
    r"|\b(?:haben\s+Sie|Sie\s+haben)\b.*\b(?:gesagt|gefunden|empfohlen|vorgeschlagen"
    r"|geschrieben|geschickt)\b"
    r"|\b(?:a|na|da|la|esa|esta|cette|die|der|diese[rn]?)\s+(?:página|pagina|page|nota|note"
    r"|notiz|seite|artikel|artículo|artigo|article|liste|lista)\b"
)
_TOLD_REFERENCE = re.compile(
    rf"\byou(?:'ve|'d|\s+have|\s+had)?\s+(?:\w+\s+)?(?:{_VIOLET_DID})\b"
    rf"|\b(?:that|the|this|those|these)\s+(?:[\w-]+\s+)?(?:{_VIOLET_MADE})\b"
    rf"|{_OTHER_LANGUAGES}",
    re.IGNORECASE,
)
# The person speaking of themselves, in each language Violet follows. "me" is left out:
# "remind me", "tell me" ask for something.
_FIRST_PERSON = re.compile(
    r"\b(?:my|mine|myself|i|i'm|i've|i'd|i'll|im"
    r"|eu|meu|minha|meus|minhas|yo|mi|mis|je|mon|ma|mes|ich|mein|meine|meinen|meinem|meiner)"
    r"(?!\w)|\bj'",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"\?\s*$|^\s*(?:what|which|when|where|who|whose|why|how|is|are|was|were|do|does|did|can"
    r"|could|remind\s+me)\b",
    re.IGNORECASE,
)


def asks_what_was_told(text: str) -> bool:
    """Whether the words ask about something Violet said, found or made."""
    return _TOLD_REFERENCE.search(text) is not None


def about_the_person(text: str) -> bool:
    """Whether the words speak of the person (their things, their doings) and not of what
    Violet told: told records never answer these."""
    return _FIRST_PERSON.search(text) is not None and not asks_what_was_told(text)


def may_recall_told(text: str) -> bool:
    """Whether told records may be recalled for these words: words that ask about what Violet
    said, or an English question that is not about the person. In the other languages only the
    first: a question about the person there may name no word of theirs ("¿Dónde vivo?")."""
    if about_the_person(text):
        return False
    if asks_what_was_told(text):
        return True
    return detect([text]) == ENGLISH and _QUESTION.search(text.strip()) is not None
