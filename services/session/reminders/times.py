"""When a reminder is due: its first local date-time and its recurrence, read and checked, and
every next occurrence computed in code (never by a model).

Times are wall-clock times in the zone the reminder was set in: "every day at 21:00" stays 21:00
there across daylight-saving changes. A wall time that does not exist on a spring-forward day
(02:30 where clocks jump from 02:00 to 03:00) comes at the same moment the clocks read 03:30; one
that happens twice on a fall-back day comes the first time only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import islice
from zoneinfo import ZoneInfo

from dateutil.rrule import rrule, rrulestr

from violet.when import refusal

# No recurrence more often than this.
SHORTEST_GAP = timedelta(minutes=15)
# The person's "now" is read to the minute: a one-off time in the minute just gone still fires.
PAST_GRACE = timedelta(minutes=1)
# Occurrences looked at to tell a recurrence's shortest gap.
GAPS_CHECKED = 64
# How far before a moment a recurrence is searched from: wider than any daylight-saving shift,
# so a wall time near the moment is never skipped.
LOOK_BACK = timedelta(hours=3)
_LOCAL = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?$")
_FREQUENCIES = ("MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY")


class TimeRefused(ValueError):
    """A time that makes no reminder; `kind` is why (`violet.when.REFUSALS`), `reason` says it
    in plain words (for the model, which tells the person)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.reason = refusal(kind)
        super().__init__(self.reason)


@dataclass(frozen=True)
class Schedule:
    """`start`: the first occurrence's wall time (naive); `repeat`: an RFC 5545 rule without
    its start ("FREQ=WEEKLY;BYDAY=MO"), or "" for once."""

    start: datetime
    zone: str
    repeat: str = ""

    @property
    def recurring(self) -> bool:
        return bool(self.repeat)

    def next_after(self, moment: datetime) -> datetime | None:
        """The first occurrence strictly after `moment` (aware), as a UTC moment; None when no
        occurrence is left."""
        zone = ZoneInfo(self.zone)
        if not self.repeat:
            due = _instant(self.start, zone)
            return due if due > moment else None
        wall = moment.astimezone(zone).replace(tzinfo=None) - LOOK_BACK
        for occurrence in self._rule().xafter(max(wall, self.start), inc=True):
            due = _instant(occurrence, zone)
            if due > moment:
                return due
        return None

    def first(self, now: datetime) -> datetime:
        """The first occurrence for a reminder set at `now`: a one-off time in the minute just
        gone is due at once; any other past one-off time is refused."""
        if not self.repeat:
            due = _instant(self.start, ZoneInfo(self.zone))
            if due < now - PAST_GRACE:
                raise TimeRefused("past")
            return max(due, now)
        coming = self.next_after(now - PAST_GRACE)
        if coming is None:
            raise TimeRefused("never")
        return coming

    def _rule(self) -> rrule:
        rule = rrulestr(self.repeat, dtstart=self.start)
        if not isinstance(rule, rrule):  # an rruleset: several rules, or dates besides
            raise TimeRefused("unreadable")
        return rule


def schedule(at: str, zone: str, repeat: str = "") -> Schedule:
    """The schedule a model asked for, checked: a well-formed local date-time that exists on
    the calendar, and a recurrence no more often than every 15 minutes."""
    found = Schedule(_local(at), zone, _rule_text(repeat, zone))
    if found.recurring:
        _often_enough(found)
    return found


def _local(at: str) -> datetime:
    at = at.strip()
    if not _LOCAL.match(at):
        raise TimeRefused("unreadable")
    try:
        return datetime.fromisoformat(at).replace(second=0)
    except ValueError:
        raise TimeRefused("impossible") from None


def _rule_text(repeat: str, zone: str) -> str:
    text = repeat.strip().removeprefix("RRULE:").upper()
    if not text:
        return ""
    parts = dict(part.partition("=")[::2] for part in text.split(";") if part)
    if parts.get("UNTIL", "").endswith("Z"):
        parts["UNTIL"] = _wall_until(parts["UNTIL"], zone)
        text = ";".join(f"{name}={value}" for name, value in parts.items())
    if not parts.get("INTERVAL", "1").isdigit() or parts.get("INTERVAL") == "0":
        raise TimeRefused("unreadable")
    if parts.get("FREQ") == "SECONDLY":
        raise TimeRefused("too_often")
    if parts.get("FREQ") not in _FREQUENCIES:
        raise TimeRefused("unreadable")
    if "DTSTART" in text:
        raise TimeRefused("unreadable")
    try:
        rrulestr(text, dtstart=datetime(2026, 1, 1))
    except ValueError:
        raise TimeRefused("unreadable") from None
    return text


def _wall_until(until: str, zone: str) -> str:
    """An end given in UTC ("20271231T230000Z") as the zone's wall time, as a rule whose times
    are wall times needs it."""
    try:
        moment = datetime.strptime(until, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        raise TimeRefused("unreadable") from None
    return moment.astimezone(ZoneInfo(zone)).strftime("%Y%m%dT%H%M%S")


def _often_enough(found: Schedule) -> None:
    try:
        occurrences = list(islice(found._rule(), GAPS_CHECKED))
    except ValueError:  # dateutil reads some rules it cannot follow (a negative INTERVAL)
        raise TimeRefused("unreadable") from None
    if not occurrences:
        raise TimeRefused("never")
    gaps = (later - earlier for earlier, later in zip(occurrences, occurrences[1:], strict=False))
    if min(gaps, default=SHORTEST_GAP) < SHORTEST_GAP:
        raise TimeRefused("too_often")


def _instant(wall: datetime, zone: ZoneInfo) -> datetime:
    """A wall time in the zone as a UTC moment (fold 0: see the module's note)."""
    return wall.replace(tzinfo=zone).astimezone(UTC)


def wall_time(moment: datetime, zone: str) -> datetime:
    """A UTC moment as the clock on the wall reads in the zone."""
    return moment.astimezone(ZoneInfo(zone))
