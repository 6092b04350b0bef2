"""The typed failures of a model call. Messages are plain words, fit for a log line."""

from __future__ import annotations


class ModelError(Exception):
    """A model call failed. `attempts` counts the requests made; `status_code` is the HTTP
    status of the last one, when there was a response."""

    def __init__(self, message: str, *, attempts: int = 1, status_code: int | None = None) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.status_code = status_code


class ModelUnavailable(ModelError):
    """Overloaded, rate limited, timed out, unreachable or failing on its side, after retries."""


class ModelRejected(ModelError):
    """The request itself was refused (a 4xx other than 429); sending it again would not help."""


class ModelOutputInvalid(ModelError):
    """The answer did not have the required shape, for example a structured answer that does
    not fit its schema. It is never repaired by guessing."""
