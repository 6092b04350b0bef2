"""The one percentile every benchmark reports: the nearest sample by rank, no interpolation."""

from __future__ import annotations

from collections.abc import Sequence


def percentile(samples: Sequence[float], p: float) -> float:
    """The sample at rank p% of the sorted samples (p from 0 to 100)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))]
