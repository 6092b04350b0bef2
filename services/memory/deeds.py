"""Violet's own outcomes as memory: what she did, in words this code chooses.

Background work reports deeds, structured: a calculation (its arithmetic and the number), a
document written (its file name, told as a title), an email sent (to whom, about what). Each
becomes one `violet` item saying what Violet did, such as `I worked out 17*23 = 391.`. The words
come from here, never from the work's report, so nothing a page, a search result, a document or
an email says can reach memory through them:
- an expression is arithmetic only (numbers, operators, abs/round/min/max/pow), its value a
  number;
- a document's name and an email's subject count only in words of the person's own request
  (`asked`), else the document is not remembered and the email is remembered without subject;
- an address is a plain address the person wrote in their request.
A deed that breaks a rule makes no item.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Literal

from memory.provenance import stems
from violet.text import title_from_file_name
from violet.v1 import deeds_pb2

Done = Literal["calculated", "wrote", "sent"]

MAX_DEEDS = 16
MAX_FIELD_CHARS = 300
MAX_ASKED_CHARS = 8_000

_ARITHMETIC = re.compile(
    r"^(?:\s*(?:\d[\d_]*(?:\.\d+)?(?:e[+-]?\d+)?|\.\d+|\*\*|//|[-+*/%(),]"
    r"|abs|round|min|max|pow))+\s*$",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"^-?(?:\d[\d,_]*(?:\.\d+)?|\.\d+)(?:e[+-]?\d+)?$", re.IGNORECASE)
_DOCUMENT = re.compile(r"^[a-z0-9][a-z0-9 ._-]{0,99}\.(?:md|txt|csv)$", re.IGNORECASE)
_ADDRESS = re.compile(r"^[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+$")
_NAME_WORD = re.compile(r"[^\W_]+")
# Words a document's name may hold besides the person's own: what kind of document it is.
_KIND_WORDS = frozenset({"note", "notes", "list", "lists", "document", "doc", "md", "txt", "csv"})


@dataclass(frozen=True)
class Deed:
    done: Done
    asked: str
    expression: str = ""
    value: str = ""
    name: str = ""
    to: str = ""
    subject: str = ""

    def as_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)


class UnfitDeed(ValueError):
    """A deed too large or of no known kind: the caller sent something malformed."""


def from_proto(deed: deeds_pb2.Deed) -> Deed:
    """A deed of the `violet.v1.Deed` message; raises UnfitDeed when one is malformed."""
    done = deed.WhichOneof("done")
    asked = str(deed.asked)
    if len(asked) > MAX_ASKED_CHARS:
        raise UnfitDeed(f"a deed's request holds at most {MAX_ASKED_CHARS} characters")
    if done == "calculated":
        calculated = deed.calculated
        found = Deed("calculated", asked, expression=calculated.expression, value=calculated.value)
    elif done == "wrote":
        found = Deed("wrote", asked, name=deed.wrote.name)
    elif done == "sent":
        sent = deed.sent
        found = Deed("sent", asked, to=sent.to, subject=sent.subject)
    else:
        raise UnfitDeed("a deed says nothing that was done")
    fields = (found.expression, found.value, found.name, found.to, found.subject)
    if any(len(field) > MAX_FIELD_CHARS for field in fields):
        raise UnfitDeed(f"a deed's fields hold at most {MAX_FIELD_CHARS} characters")
    return found


def from_json(text: str) -> Deed | None:
    """A deed as stored by `Deed.as_json`; None for anything else."""
    try:
        return Deed(**json.loads(text))
    except (TypeError, ValueError):
        return None


def item_text(deed: Deed) -> str | None:
    """The words of the deed's `violet` item, or None when the deed breaks a rule."""
    if deed.done == "calculated":
        expression = " ".join(deed.expression.split())
        value = deed.value.strip()
        worked_out = _ARITHMETIC.match(expression) and re.search(r"\d", expression)
        if worked_out and _NUMBER.match(value):
            return f"I worked out {expression} = {value}."
        return None
    if deed.done == "wrote":
        name = deed.name.strip()
        if not _DOCUMENT.match(name) or not _from_request(name, deed.asked, _KIND_WORDS):
            return None
        kind = "list" if "list" in _words(name) else "note"
        return f'I wrote the {kind} "{title_from_file_name(name)}" and put it in your documents.'
    if deed.done == "sent":
        to = deed.to.strip()
        if not _ADDRESS.match(to) or not _named_in(to, deed.asked):
            return None
        subject = " ".join(deed.subject.split()).strip(" .")
        if subject and _from_request(subject, deed.asked):
            return f'I sent an email to {to} about "{subject}".'
        return f"I sent an email to {to}."
    return None


def _named_in(address: str, asked: str) -> bool:
    whole = r"(?<![\w.+'%-])" + re.escape(address) + r"(?![\w-]|\.[A-Za-z0-9])"
    return re.search(whole, asked, re.IGNORECASE) is not None


def _words(text: str) -> set[str]:
    return {word.casefold() for word in _NAME_WORD.findall(text)}


def _from_request(words: str, asked: str, also: frozenset[str] = frozenset()) -> bool:
    """Whether every word of `words` (but `also`) is one of the request's words, stemmed."""
    own = stems(_words(words) - also)
    return own <= stems(_words(asked))
