"""When to try a model request again, and how long to wait before it."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import anthropic
import httpx2

RETRIED_ERROR_TYPES = frozenset({"overloaded_error", "rate_limit_error", "api_error"})


@dataclass
class Backoff:
    """Jittered exponential backoff: attempt n waits up to `base_s * 2**n`, capped at `max_s`,
    and at least what a `retry-after` header asks for (within the cap)."""

    base_s: float = 0.5
    max_s: float = 8.0
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, retry: int, retry_after_s: float | None = None) -> float:
        ceiling = min(self.max_s, self.base_s * 2**retry)
        wait = ceiling * self.rng.uniform(0.5, 1.0)
        if retry_after_s is not None:
            wait = max(wait, min(retry_after_s, self.max_s))
        return wait


def is_retried(error: Exception) -> bool:
    """Overload (429, 529), any 5xx, connection errors and timeouts; errors reported inside a
    stream count by their type. A transport error can surface bare while a stream is read."""
    if isinstance(error, anthropic.APIConnectionError | httpx2.TransportError):
        return True
    if isinstance(error, anthropic.APIStatusError):
        status = error.status_code
        if status == 429 or status >= 500:
            return True
        return status < 400 and error.type in RETRIED_ERROR_TYPES
    return False


def retry_after_s(error: Exception) -> float | None:
    response = getattr(error, "response", None)
    if response is None:
        return None
    value = response.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
