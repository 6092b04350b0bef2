"""How a request answers what a work session said last: the dialogue acts routing reads.

A request usually continues a topic by answering its last outcome: "In Oakland." answers
"In which city?", "Yes, that's right" answers "Please confirm: ...", "Any others?" follows "I
found 4 restaurants". Neither the request nor the card says this alone, so routing reads both
sides: the acts of the last outcome (it asks for a detail, offers something, asks to confirm,
says it is done, ...), the acts of the request (it agrees, declines, asks, gives a detail, ...),
and whether the details the outcome asks for (a time, a place, a number) are the ones the
request gives. The choice model learns how much each pair counts, from routing cases.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from violet.text import MONTHS, REQUEST_STOP_WORDS, WEEKDAYS

# What a card's last outcome does. The first three are the router's older cues (a question, a
# request to confirm, a closing line), unchanged.
OUTCOME_ACTS: Mapping[str, re.Pattern[str]] = {
    "asks": re.compile(r"\?"),
    "confirms": re.compile(
        r"confirm|is (that|this) (correct|right)|correct\?|shall i|should i|would you like|"
        r"do you want",
        re.IGNORECASE,
    ),
    "closes": re.compile(
        r"anything else|something else|glad|enjoy|have a (good|great|nice)|welcome|"
        r"is there anything|help you with",
        re.IGNORECASE,
    ),
    "offers": re.compile(
        r"\b(found|there (is|are)|there's|how about|what about|i have|i've got|one is|called|"
        r"named)\b",
        re.IGNORECASE,
    ),
    "asks_detail": re.compile(
        r"\b(what|which|when|where|how many|how much|how long|who)\b[^.?!]*\?|"
        r"please (tell|let|provide|specify|give)|let me know",
        re.IGNORECASE,
    ),
    "asks_yes_no": re.compile(
        r"(^|[.!?]\s+)(do|does|would|will|shall|should|can|could|is|are|want)\b[^.?!]*\?",
        re.IGNORECASE,
    ),
    "done": re.compile(
        r"success|booked|confirmed|has been|have been|is on its way|started|playing|is now|"
        r"reserved|scheduled|set (up|an?)\b|added|made",
        re.IGNORECASE,
    ),
    "failed": re.compile(
        r"sorry|couldn't|could not|unable|not available|failed|no \w+ (is |are )?available",
        re.IGNORECASE,
    ),
}
# What a request does, besides giving details (REQUEST_ACTS' last).
_SAID: Mapping[str, re.Pattern[str]] = {
    "agrees": re.compile(
        r"^\W*(yes|yeah|yep|yup|sure|ok|okay|sounds|that works|perfect|great|correct|right|"
        r"that's right|please do|go ahead|absolutely|fine|cool|awesome)\b",
        re.IGNORECASE,
    ),
    "declines": re.compile(r"^\W*(no|nope|nah|not)\b|\bdon't\b", re.IGNORECASE),
    "thanks": re.compile(r"\b(thanks|thank you|that's all|bye|nothing else)\b", re.IGNORECASE),
    "wants_others": re.compile(
        r"\b(others?|another|else|different|any other|more options)\b", re.IGNORECASE
    ),
    "asks": re.compile(
        r"\?|^\W*(what|where|how|is|are|does|do|can|could|who|when|which)\b", re.IGNORECASE
    ),
}
REQUEST_ACTS = (*_SAID, "gives_detail")

# The details an outcome asks for, and how a request gives each.
_ASKED_DETAILS: Mapping[str, re.Pattern[str]] = {
    "time": re.compile(
        r"\b(when|what time|which time|what date|which date|what day|which day|dates?|"
        r"how long|until|start|check.?in|check.?out|leave|depart|return)\b",
        re.IGNORECASE,
    ),
    "place": re.compile(
        r"\b(where|which city|what city|city|area|location|locality|neighbou?rhood|"
        r"destination|origin|leaving from|going to|address)\b",
        re.IGNORECASE,
    ),
    "number": re.compile(
        r"\b(how many|number of|how much|amount|people|tickets|seats|rooms|bedrooms|party)\b",
        re.IGNORECASE,
    ),
}
DETAILS = tuple(_ASKED_DETAILS)
_GIVEN_TIME = re.compile(
    r"\b(today|tonight|tomorrow|yesterday|morning|afternoon|evening|night|noon|midnight|week|"
    r"weekend|month|o'?clock|\d{1,2}(:\d\d)?\s*(am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d\d|\d{1,2}(st|nd|rd|th)|"
    + "|".join((*WEEKDAYS, *MONTHS))
    + r")\b",
    re.IGNORECASE,
)
_GIVEN_NUMBER = re.compile(
    r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|couple|single|"
    r"both)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W\d_][\w'-]*")
# Words of a request that points back at something just offered ("is it ...", "any others").
_REFERS = re.compile(
    r"\b(it|its|it's|they|them|their|that|this|those|these|there|one|ones|others?|another|"
    r"else|same|venue|place)\b",
    re.IGNORECASE,
)
_QUESTION_OR_ASK = re.compile(
    r"\?\s*$|\b(please|tell me|let me know|provide|specify)\b", re.IGNORECASE
)
_SENTENCES = re.compile(r"(?<=[.?!])\s+")


def outcome_acts(outcome: str) -> frozenset[str]:
    return frozenset(act for act, pattern in OUTCOME_ACTS.items() if pattern.search(outcome))


def request_acts(request: str) -> frozenset[str]:
    said = {act for act, pattern in _SAID.items() if pattern.search(request)}
    if given_details(request):
        said.add("gives_detail")
    return frozenset(said)


def asked_details(outcome: str) -> frozenset[str]:
    """The details the outcome's questions (or "please tell me ..." lines) ask for."""
    asking = " ".join(
        sentence
        for sentence in _SENTENCES.split(outcome.strip())
        if _QUESTION_OR_ASK.search(sentence)
    )
    return frozenset(kind for kind, pattern in _ASKED_DETAILS.items() if pattern.search(asking))


def given_details(request: str) -> frozenset[str]:
    given = set()
    if _GIVEN_TIME.search(request):
        given.add("time")
    if _GIVEN_NUMBER.search(_GIVEN_TIME.sub(" ", request)):  # "10:30 am" is no count
        given.add("number")
    if names_a_place(request):
        given.add("place")
    return frozenset(given)


def names_a_place(request: str) -> bool:
    """A proper name in the request, other than a day or a month: a capitalised word within a
    sentence, or one that starts a sentence and is no common word ("Calistoga, please.")."""
    for sentence in _SENTENCES.split(request.strip()):
        words = _WORD.findall(sentence)
        for position, word in enumerate(words):
            bare = word.lower().split("'")[0]
            common = _COMMON_OPENERS if position == 0 else _PRONOUNS
            if word[0].isupper() and bare not in common and bare not in _CALENDAR:
                return True
    return False


def refers_back(request: str) -> bool:
    return bool(_REFERS.search(request))


_PRONOUNS = frozenset({"i"})
_CALENDAR = frozenset((*WEEKDAYS, *MONTHS))
# Words that begin a sentence capitalised without naming anything.
_COMMON_OPENERS = (
    REQUEST_STOP_WORDS
    | _PRONOUNS
    | frozenset(
        _WORD.findall(
            """yes yeah yep yup sure ok okay no nope nah great perfect fine thanks thank good cool
        awesome sounds correct right alright excellent wonderful nice please find search get
        book make reserve play show tell give help need want would like look check let hi hello
        actually also just something anything nothing everything someone anyone maybe"""
        )
    )
)
