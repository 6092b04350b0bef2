"""Backoff: jittered, exponential and capped, unless the service says how long to wait."""

from __future__ import annotations

import random

from violet.models import Backoff


def test_backoff_grows_with_jitter_and_stays_under_the_cap():
    backoff = Backoff(base_s=0.5, max_s=4.0, rng=random.Random(7))
    for retry, ceiling in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (6, 4.0)]:
        waits = {backoff.delay(retry) for _ in range(20)}
        assert all(ceiling / 2 <= wait <= ceiling for wait in waits)
        assert len(waits) > 1


def test_a_wait_the_service_asks_for_is_taken_as_it_is():
    backoff = Backoff(base_s=0.01, max_s=2.0)
    assert backoff.delay(0, asked_s=1.5) == 1.5
    assert backoff.delay(0, asked_s=60) == 60  # the call's budget decides whether to wait
    assert backoff.delay(3, asked_s=0.0) == 0.0
