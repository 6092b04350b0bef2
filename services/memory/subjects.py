"""What a fact is about, when a rule can tell: its subject and its value.

Two facts on one subject with different values cannot both be true now ("I moved to Lyon" and
"I live in Paris"), so the newer supersedes the older. Likes and preferences add up instead
("I like tea" and "I like cats"), so they have no subject here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.provenance import normalise

_WHO = r"(?:(?:i|the person|they|he|she|you)\s+)?"
_NOW = r"(?:(?:now|currently|just|recently|finally)\s+)?"
_HOME = re.compile(
    rf"^{_WHO}{_NOW}(?:live|lives|living|am living|'m living|is living|are living"
    r"|moved|has moved|have moved|'ve moved|relocated|have relocated)\s+(?:in|to)\s+(?P<value>.+)$"
)
_WORK = re.compile(
    rf"^{_WHO}{_NOW}(?:work|works|am working|'m working|is working|started working"
    r"|began working|have started working)\s+(?:at|for)\s+(?P<value>.+)$"
)
_AGE = re.compile(rf"^{_WHO}(?:am|'m|is|are)\s+(?P<value>\d+)(?:\s+years?\s+old)?$")
_TAKE = re.compile(
    rf"^{_WHO}(?:take|takes|have|has|drink|drinks)\s+my\s+(?P<what>[\w'-]+)\s+(?P<value>.+)$"
)
_THEIR = r"(?:my|the person's|their|his|her|your)"
_POSSESSION = re.compile(
    rf"^(?:.*?\b)?{_THEIR}\s+(?P<what>(?:[\w'-]+\s+){{0,3}}?[\w'-]+)\s+(?:is|are|was)\s+(?P<value>.+)$"
)
_LEAD = re.compile(r"^(?:remember that|note that|fyi)\s+")


@dataclass(frozen=True)
class Subject:
    name: str
    value: str


def subject_of(text: str) -> Subject | None:
    said = _LEAD.sub("", normalise(text).rstrip(".!"))
    for name, pattern in (("home", _HOME), ("work", _WORK), ("age", _AGE)):
        found = pattern.match(said)
        if found:
            return Subject(name, _value(found.group("value")))
    found = _TAKE.match(said)
    if found:
        return Subject(f"takes my {found.group('what')}", _value(found.group("value")))
    found = _POSSESSION.match(said)
    if found:
        return Subject(f"my {found.group('what')}", _value(found.group("value")))
    return None


def _value(words: str) -> str:
    return re.sub(r"^(?:called|named)\s+", "", words.strip(" .,!;")).strip()
