"""When to send a model request again, and how long to wait first: as the service asks.

The service's own answer decides first: `x-should-retry: true|false` is obeyed either way, and
`retry-after-ms`, then `retry-after` (seconds or an HTTP date) say how long to wait. Without
them: request timeouts (408), lock timeouts (409), rate limits (429), any 5xx, connection
failures and errors reported inside a started stream are tried again after a jittered backoff.
A spent spending limit is never tried again: waiting does not refill it.
"""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass, field

import anthropic
import httpx2

RETRIED_STATUSES = frozenset({408, 409, 429})
# Errors that arrive inside a stream that began with 200: judged by their type.
RETRIED_ERROR_TYPES = frozenset({"overloaded_error", "rate_limit_error", "api_error"})
NEVER_RETRIED_CODES = frozenset({"enforced_spend_limit_reached", "contract_spend_limit_reached"})


@dataclass
class Backoff:
    """Jittered exponential backoff: retry n waits between half and all of
    `min(max_s, base_s * 2**n)`; a wait the service asks for is taken as it is."""

    base_s: float = 0.5
    max_s: float = 8.0
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, retry: int, asked_s: float | None = None) -> float:
        if asked_s is not None:
            return max(0.0, asked_s)
        ceiling = min(self.max_s, self.base_s * 2**retry)
        return ceiling * self.rng.uniform(0.5, 1.0)


def _headers(error: Exception) -> httpx2.Headers | None:
    response = getattr(error, "response", None)
    return getattr(response, "headers", None)


# How a 400 says an organisation's or workspace's own spending limit was reached.
SPEND_LIMIT_MESSAGES = (
    "You have reached your specified API usage limits",
    "You have reached your specified workspace API usage limits",
)


def is_spend_limit(error: Exception) -> bool:
    """Whether the error says the paying account reached a spending limit."""
    if getattr(error, "error_code", None) in NEVER_RETRIED_CODES:
        return True
    body = getattr(error, "body", None)
    message = body.get("error", {}).get("message", "") if isinstance(body, dict) else ""
    return getattr(error, "status_code", None) == 400 and str(message).startswith(
        SPEND_LIMIT_MESSAGES
    )


def is_retried(error: Exception) -> bool:
    """Whether sending the request again may succeed."""
    if isinstance(error, anthropic.APIConnectionError | httpx2.TransportError | TimeoutError):
        return True
    if not isinstance(error, anthropic.APIStatusError):
        return False
    headers = _headers(error)
    told = headers.get("x-should-retry") if headers is not None else None
    if told in ("true", "false"):
        return told == "true"
    if getattr(error, "error_code", None) in NEVER_RETRIED_CODES:
        return False
    status = error.status_code
    if status in RETRIED_STATUSES or status >= 500:
        return True
    return status < 400 and error.type in RETRIED_ERROR_TYPES


def retry_after_s(error: Exception, now: float | None = None) -> float | None:
    """How long the service asked to wait before the next try, in seconds; None: not said."""
    headers = _headers(error)
    if headers is None:
        return None
    try:
        return float(headers["retry-after-ms"]) / 1000
    except (KeyError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        return email.utils.mktime_tz(parsed) - (time.time() if now is None else now)
