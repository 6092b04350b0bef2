"""Backoff: jittered, exponential, capped, and at least what the service asks for."""

from __future__ import annotations

import random

from violet.models import Backoff


def test_backoff_grows_with_jitter_and_stays_under_the_cap():
    backoff = Backoff(base_s=0.5, max_s=4.0, rng=random.Random(7))
    for retry, ceiling in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (6, 4.0)]:
        waits = {backoff.delay(retry) for _ in range(20)}
        assert all(ceiling / 2 <= wait <= ceiling for wait in waits)
        assert len(waits) > 1


def test_backoff_honours_retry_after_within_the_cap():
    backoff = Backoff(base_s=0.01, max_s=2.0)
    assert backoff.delay(0, retry_after_s=1.5) == 1.5
    assert backoff.delay(0, retry_after_s=60) == 2.0
