from __future__ import annotations

from gateway.limits import PersonLimiter


def test_a_burst_is_allowed_then_refused_per_person() -> None:
    limiter = PersonLimiter.per_minute(1, burst=3)
    assert [limiter.allow("ana") for _ in range(4)] == [True, True, True, False]
    assert limiter.allow("ben")
