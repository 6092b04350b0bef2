"""Whether words in a message are said by the speaker as true now, of themselves.

Memory keeps only what the person states. "My bank PIN is 1234" is a statement; the same words
are none in "my friend said my bank PIN is 1234" (someone else's), "don't remember that my PIN
is 1234" (not to be kept), "my PIN isn't 1234" (denied), "if my PIN were 1234" (supposed) or
"is my PIN 1234?" (asked).

Words are read in their sentence. Reported speech and supposition reach over the whole sentence
up to a contrast ("but", ";"): "my friend said my PIN is 1234 and my PIN is ..." reports both. A
denial reaches only its own clause, so "I don't live in Paris, I live in Lyon" still states Lyon.

The memory service's provenance check and the offline model's fact rule both ask this module, so
the person is never thanked for a fact that memory then refuses.
"""

from __future__ import annotations

import re

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'"})
# A sentence ends at . ! ? followed by a space or the end ("3.5" goes on), or at a line break.
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)|\n")
_CONTRAST = re.compile(r";|\b(?:but|however|although|though|whereas)\b", re.IGNORECASE)
_CLAUSE = re.compile(r"[;,]|\b(?:but|however|although|though|whereas|and|or)\b", re.IGNORECASE)

_NOT_TO_KEEP = re.compile(
    r"\b(?:don't|do not|never|no need to|not)\s+(?:\w+\s+)?"
    r"(?:remember|store|save|keep|note|memori[sz]e|write down|record)\b"
    r"|(?<!don't )(?<!do not )(?<!never )\bforget\s+(?:this|that|it|about)\b",
    re.IGNORECASE,
)
# Phrases that look like the cues below but keep a statement the speaker's own.
_OWN_WORDS = re.compile(
    r"\b(?:don't|do not|never) forget\b"
    r"|\b(?:could|would|can|will) you\b"
    r"|\b(?:as |like )?i(?: have|'ve| had|'d)? (?:said|say|told|tell|mentioned|wrote|swear"
    r"|think|believe|reckon)\b"
    r"|\bi'm telling you\b|\blet me tell you\b",
    re.IGNORECASE,
)
_DENIED = re.compile(
    r"\b(?:not|never|no longer|nobody|nothing|neither|nor|cannot|none)\b|\b\w+n't\b|\bno\s+(?=\w)",
    re.IGNORECASE,
)
_REPORTED = re.compile(
    r"\b(?:said|says|say|saying|told|tells|tell|telling|claims?|claimed|claiming|thinks?"
    r"|thought|believes?|believed|reckons?|heard|hears|wrote|writes|written|reported"
    r"|mentioned|insists?|insisted|swears?|swore|suggests?|suggested|according to|apparently"
    r"|supposedly|allegedly|reportedly|rumou?red|rumou?rs?)\b",
    re.IGNORECASE,
)
_SUPPOSED = re.compile(
    r"\b(?:if|suppose|supposing|imagine|imagining|pretend|pretending|hypothetically"
    r"|let's say|lets say|as if|unless|whether|wish|wishes|maybe|perhaps|might|would|could"
    r"|should|kidding|joking|jk|used to|for example|for instance|e\.g)\b",
    re.IGNORECASE,
)
_REMEMBER = re.compile(r"\bremember\b", re.IGNORECASE)


def stated(message: str, start: int, end: int) -> bool:
    """Whether `message[start:end]` is said by the speaker as true, read in its sentence."""
    text = message.translate(_APOSTROPHES)
    sentence_start, sentence_end, asked = _sentence(text, start, end)
    sentence = text[sentence_start:sentence_end]
    if asked and not _REMEMBER.search(sentence):
        return False  # a question states nothing, unless it asks to remember something
    if _NOT_TO_KEEP.search(sentence):
        return False
    reach = _OWN_WORDS.sub(" ", _around(text, sentence_start, sentence_end, start, end, _CONTRAST))
    clause = _OWN_WORDS.sub(" ", _around(text, sentence_start, sentence_end, start, end, _CLAUSE))
    return not (_REPORTED.search(reach) or _SUPPOSED.search(reach) or _DENIED.search(clause))


def states(text: str) -> bool:
    """Whether the words, read as one sentence, state something rather than deny, report,
    suppose or ask it."""
    return stated(text, 0, len(text))


def _sentence(text: str, start: int, end: int) -> tuple[int, int, bool]:
    """The bounds of the sentence holding text[start:end], and whether it is a question."""
    sentence_start = 0
    for found in _SENTENCE_END.finditer(text, 0, start):
        sentence_start = found.end()
    after = _SENTENCE_END.search(text, max(end - 1, start))
    sentence_end = after.start() if after else len(text)
    asked = "?" in after.group(0) if after else text.rstrip().endswith("?")
    return sentence_start, sentence_end, asked


def _around(
    text: str, sentence_start: int, sentence_end: int, start: int, end: int, cut: re.Pattern[str]
) -> str:
    """The part of the sentence between the cuts on either side of text[start:end]."""
    part_start, part_end = sentence_start, sentence_end
    for found in cut.finditer(text, sentence_start, sentence_end):
        if found.end() <= start:
            part_start = found.end()
        elif found.start() >= end:
            part_end = found.start()
            break
    return text[part_start:part_end]
