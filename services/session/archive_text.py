"""The archive's words for people: its README and `your-data.md`, written from the same records
as `data.json`, one line at a time."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

README = """# Your Violet archive

Everything Violet keeps about you, as it was when you asked for it.

- `your-data.md`: all of it, to read: your conversation with Violet, what she remembers about
  you, what she told you and where it came from, the documents she wrote, the work she did and
  what you said yes or no to, your reminders, the devices you signed in with, the browsers
  Violet sends notifications to, and what your conversation cost.
- `data.json`: the same, for another program to read.
- `documents/`: the documents Violet wrote for you, as files (`documents/deleted/` holds the ones
  you deleted in the last 30 days).
"""

HEADINGS = {
    "conversation": "Your conversation",
    "remembered": "What Violet remembers about you",
    "told": "What Violet told you",
    "documents": "Documents Violet wrote for you",
    "work": "Work Violet did for you",
    "approvals": "What Violet asked you to approve",
    "reminders": "Your reminders and work on a schedule",
    "devices": "Devices you signed in with",
    "notifications": "Browsers Violet sends notifications to",
    "usage": "What your conversation cost",
    "account": "Your account",
}
NOTHING = "Nothing here."

Record = dict[str, Any]


def markdown_lines(heading: Record, records: Iterable[tuple[str, Record]]) -> Iterator[str]:
    yield f"# Your Violet archive\n\nMade on {_moment(heading['exported_at'])}.\n"
    current = ""
    day = ""
    for section, record in records:
        if section != current:
            yield f"\n## {HEADINGS.get(section, section)}\n\n"
            current, day = section, ""
        if section == "conversation":
            said_on = record["at"][:10]
            if said_on != day:
                day = said_on
                yield f"\n### {said_on}\n\n"
        yield from _lines(section, record)
    if not current:
        yield f"\n{NOTHING}\n"


def _lines(section: str, record: Record) -> Iterator[str]:
    if section == "conversation":
        who = "You" if record["author"] == "you" else "Violet"
        yield f"**{who}**, {record['at'][11:16]}:\n\n{_quoted(record['text'])}\n\n"
    elif section == "remembered":
        yield f"- {_inline(record['text'])} ({record['remembered_at'][:10]})\n"
    elif section == "told":
        sources = "; ".join(_source(source) for source in record["sources"])
        origin = f" From {sources}." if sources else ""
        yield f"- {record['told_at'][:10]}: {_inline(record['text'])}{origin}\n"
    elif section == "documents":
        deleted = ", deleted" if record["deleted"] else ""
        yield (
            f"- {_inline(record['title'] or record['name'])}: `{record['file']}` "
            f"({record['written_at'][:10]}, {record['size']} bytes{deleted})\n"
        )
    elif section == "work":
        result = _inline(record["result"]) if record["result"] else record["state"]
        yield f"- {record['asked_at'][:10]}: {_inline(record['asked'])}\n  - {result}\n"
    elif section == "approvals":
        yield f"- {record['asked_at'][:10]}: {_inline(record['question'])}: {record['answer']}\n"
    elif section == "reminders":
        state = "cancelled" if record["cancelled_at"] else "open" if record["next"] else "done"
        every = f", repeating {record['repeat']}" if record["repeat"] else ""
        yield (
            f"- {_inline(record['text'])}: from {record['starts']} ({record['zone']}{every}), "
            f"{state}\n"
        )
    elif section == "devices":
        yield (
            f"- {_inline(record['agent']) or 'A device'}: signed in {record['signed_in_at'][:10]}, "
            f"last seen {record['last_seen'][:10]}\n"
        )
    elif section == "notifications":
        shown = "with what she says" if record["previews"] else "without what she says"
        yield f"- Through {record['service']}, {shown}: since {record['since'][:10]}\n"
    elif section == "usage":
        yield (
            f"- {record['day']}: {record['calls']} {record['call']} calls on {record['model']}, "
            f"paid by {'you' if record['payer'] == 'own' else 'Violet'}: "
            f"${record['cost_usd']:.4f}\n"
        )
    elif section == "account":
        yield from _account(record)


def _account(record: Record) -> Iterator[str]:
    key = record["own_key"]
    if key is None:
        yield "- You have not given Violet a key of your own.\n"
    else:
        refused = f"; refused {key['refused_at'][:10]}" if key["refused_at"] else ""
        yield f"- Your own key, ending in {key['ending']}: set {key['set_at'][:10]}{refused}.\n"
    budget = record["budget"]
    if budget["day_usd"] is not None or budget["month_usd"] is not None:
        yield f"- Your limits: ${budget['day_usd']} a day, ${budget['month_usd']} a month.\n"


def _source(source: Record) -> str:
    where = source.get("page") or source.get("document") or ""
    title = source.get("title") or ""
    return f"{_inline(title)} ({where})" if title else where


def _moment(at: str) -> str:
    return f"{at[:10]} at {at[11:16]} UTC"


def _quoted(text: str) -> str:
    """A message as a quote: whatever it holds reads as its own words, not as headings."""
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines() or [""])


def _inline(text: str) -> str:
    return " ".join(text.split())
