"""Limits at the gateway, each per gateway replica: per person, a token bucket shared by the
person's devices (for says, for keys tried, for archives downloaded); and a bound on the says
whose answers are still to come."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class _Bucket:
    tokens: float
    refilled_at: float = field(default_factory=time.monotonic)


# A key tried costs two model calls (a free key checker otherwise), an archive a pass over all
# of a person's data: a handful an hour is plenty for a person, and little for anyone abusing it.
KEY_SETS_PER_HOUR = 5
EXPORTS_PER_HOUR = 3


class PersonLimiter:
    """A token bucket per person: `burst` at once, one more every 1 / `per_s` seconds."""

    def __init__(self, per_s: float, burst: int) -> None:
        self._rate = per_s
        self._burst = burst
        self._buckets: dict[str, _Bucket] = {}

    @classmethod
    def per_minute(cls, count: int, burst: int) -> PersonLimiter:
        return cls(count / 60.0, burst)

    @classmethod
    def per_hour(cls, count: int) -> PersonLimiter:
        return cls(count / 3600.0, count)

    def allow(self, person: str) -> bool:
        bucket = self._buckets.setdefault(person, _Bucket(tokens=self._burst))
        moment = time.monotonic()
        bucket.tokens = min(self._burst, bucket.tokens + (moment - bucket.refilled_at) * self._rate)
        bucket.refilled_at = moment
        if bucket.tokens < 1:
            return False
        bucket.tokens -= 1
        return True


class SaysInFlight:
    """The says this gateway replica has stored and not yet seen answered, bounded: when the
    turns behind them pile up, new says are refused before they are stored, instead of queueing
    without bound. A say counts until its answer streams past, or until the device that sent it
    goes (nobody here would see the answer)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._open: set[tuple[str, str]] = set()

    def __len__(self) -> int:
        return len(self._open)

    def take(self, person: str, say_id: str) -> bool:
        """Counts the say in, if there is room; a say already counted (a resend) is let by."""
        key = (person, say_id)
        if key in self._open:
            return True
        if len(self._open) >= self._limit:
            return False
        self._open.add(key)
        return True

    def done(self, person: str, say_id: str) -> None:
        self._open.discard((person, say_id))
