"""Questions about what Violet told the person, told apart from questions about the person.

What Violet told (her answers, and work results as she told them) is kept as "told" records.
They answer "what time did you say the ferry leaves?" and never "what is my PIN?": a page Violet
read out may say anything, and none of it is a fact about the person. The memory service gives
told records only for a question these rules let through, whatever its caller asks, and the
offline model answers from them only a question that asks what Violet said. One set of rules
serves both, so the two never disagree.

Questions about what was told are read in English phrasings. The person speaking of
themselves is read in each language Violet follows, so that a question about the person in any
of them never gets told records (the safe side).
"""

from __future__ import annotations

import re

# What Violet does that a person later asks about: said, found, suggested, wrote, worked out.
_VIOLET_DID = (
    r"say|said|tell|told|mention|mentioned|suggest|suggested|recommend|recommended|find|found"
    r"|write|wrote|written|send|sent|read|look\s+up|looked\s+up|work\s+out|worked\s+out|give|gave"
    r"|show|showed|quote|quoted|pick|picked|propose|proposed|come\s+up\s+with|came\s+up\s+with"
)
# Things Violet looked up or made, named as such: "that page", "the note".
_VIOLET_MADE = (
    r"page|web\s*page|article|site|website|link|note|list|document|doc|search|results?"
    r"|answer|sum|calculation|email|e-mail"
)
_TOLD_REFERENCE = re.compile(
    rf"\byou(?:'ve|'d|\s+have|\s+had)?\s+(?:\w+\s+)?(?:{_VIOLET_DID})\b"
    rf"|\b(?:that|the|this|those|these)\s+(?:{_VIOLET_MADE})\b",
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
    """Whether told records may be recalled for these words: a question that is not about the
    person, or words that ask about what Violet said."""
    if about_the_person(text):
        return False
    return asks_what_was_told(text) or _QUESTION.search(text.strip()) is not None
