"""Per-person rate limit on says: a token bucket shared by the person's devices on a replica."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class _Bucket:
    tokens: float
    refilled_at: float = field(default_factory=time.monotonic)


class SayLimiter:
    def __init__(self, per_minute: int, burst: int) -> None:
        self._rate = per_minute / 60.0
        self._burst = burst
        self._buckets: dict[str, _Bucket] = {}

    def allow(self, person: str) -> bool:
        bucket = self._buckets.setdefault(person, _Bucket(tokens=self._burst))
        moment = time.monotonic()
        bucket.tokens = min(self._burst, bucket.tokens + (moment - bucket.refilled_at) * self._rate)
        bucket.refilled_at = moment
        if bucket.tokens < 1:
            return False
        bucket.tokens -= 1
        return True
