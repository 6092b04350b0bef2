"""Where something Violet told came from: a page she fetched, a document she read or wrote.

A source only attributes Violet's words; it never says anything about the person.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from violet.v1 import deeds_pb2

MAX_SOURCES = 8
MAX_SOURCE_CHARS = 2_000


class UnfitSource(ValueError):
    """A source too large, or naming neither a page nor a document."""


@dataclass(frozen=True)
class Source:
    page: str = ""
    document: str = ""
    title: str = ""

    @property
    def key(self) -> str:
        """What the source is, whatever its title: a page read again is the same source."""
        return f"page:{self.page}" if self.page else f"document:{self.document}"

    def label(self) -> str:
        """The source in plain words, as the person sees it: a page by its title and address, a
        document by its title."""
        if self.page:
            return f'"{self.title}" ({self.page})' if self.title else self.page
        return f'"{self.title}"' if self.title else self.document

    def as_dict(self) -> dict[str, str]:
        return {name: value for name, value in vars(self).items() if value}


def from_proto(source: deeds_pb2.Source) -> Source:
    """A source of the `violet.v1.Source` message; raises UnfitSource when malformed."""
    kind = source.WhichOneof("source")
    if kind is None:
        raise UnfitSource("a source names neither a page nor a document")
    found = Source(
        page=source.page.strip(), document=source.document.strip(), title=source.title.strip()
    )
    if any(len(value) > MAX_SOURCE_CHARS for value in (found.page, found.document, found.title)):
        raise UnfitSource(f"a source's fields hold at most {MAX_SOURCE_CHARS} characters")
    if not (found.page or found.document):
        raise UnfitSource("a source names neither a page nor a document")
    return found


def sources_from(stored: Iterable[object] | None) -> tuple[Source, ...]:
    """Sources as stored (`Source.as_dict`); anything else is left out."""
    found = []
    for value in stored or ():
        if isinstance(value, dict):
            fields = {name: str(value.get(name, "")) for name in ("page", "document", "title")}
            if fields["page"] or fields["document"]:
                found.append(Source(**fields))
    return tuple(found)
