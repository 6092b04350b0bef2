"""Time zones: the person's, by its IANA name (`Europe/Lisbon`), and what a moment is there.

The names are the IANA database's as `tzdata` ships it, so every machine and image knows the same
ones whatever its system holds; a name outside it is refused, never guessed.
"""

from __future__ import annotations

import functools
import zoneinfo
from datetime import datetime
from zoneinfo import ZoneInfo

UTC_NAME = "UTC"
# An IANA name is ASCII letters, digits and `/_+-`, well under this.
MAX_NAME_CHARS = 64


@functools.cache
def _names() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def is_zone(name: object) -> bool:
    """Whether `name` is an IANA time zone's name."""
    return isinstance(name, str) and 0 < len(name) <= MAX_NAME_CHARS and name in _names()


def zone(name: str | None, default: str = UTC_NAME) -> ZoneInfo:
    """The zone named `name`, else `default`'s (a name no longer known falls back to it)."""
    return ZoneInfo(name) if name is not None and is_zone(name) else ZoneInfo(default)


def local_moment(moment: datetime, name: str | None, default: str = UTC_NAME) -> datetime:
    """`moment` (aware) as the clock reads in the zone named `name`."""
    return moment.astimezone(zone(name, default))


def spoken(moment: datetime) -> str:
    """A local moment as the main model is told it: weekday, date, 24-hour time and zone."""
    name = getattr(moment.tzinfo, "key", None) or moment.tzname() or UTC_NAME
    return f"{moment:%A %-d %B %Y, %H:%M} ({name})"
