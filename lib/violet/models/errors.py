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


class ModelUnreachable(ModelUnavailable):
    """No connection to the API's address could be made at all."""


class PersonGone(ModelError):
    """The person the call is for was deleted, or is being deleted: no call is made for them.
    Not a failure: what was under way for them simply ends."""


class ModelRejected(ModelError):
    """The request itself was refused (a 4xx other than 429); sending it again would not help."""


class ModelOutputInvalid(ModelError):
    """The answer did not have the required shape, for example a structured answer that does
    not fit its schema. It is never repaired by guessing."""


class ModelRefused(ModelError):
    """The model declined to answer (`stop_reason: refusal`). `category` is the API's reason
    (`cyber`, `bio`, ...) when it gave one. Asking the same model again usually gets the same."""

    def __init__(self, message: str, *, category: str | None = None, attempts: int = 1) -> None:
        super().__init__(message, attempts=attempts)
        self.category = category


class ModelContextFull(ModelError):
    """The conversation filled the model's context window before the answer was complete."""


class SpendLimitReached(ModelError):
    """The account paying for the call reached a spending limit: its organisation's or
    workspace's own (400 "You have reached your specified API usage limits"), its tier's monthly
    cap (429 `enforced_spend_limit_reached`) or its contract's (429
    `contract_spend_limit_reached`). Asking again does not help until the limit is raised or
    resets (https://platform.claude.com/docs/en/api/errors)."""


class KeyRefused(ModelRejected):
    """The account behind the key refused the call: the key is wrong or revoked (401), lacks
    permission (403), or its account cannot pay (402). Another try with that key would not help."""
