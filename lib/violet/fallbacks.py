"""Fallbacks: failures Violet chose to survive, each made visible in one call.

A fallback keeps the person served when a part fails (the fold keeps the old summary, a
request with no pick opens new work, ...), so it would hide the failure if it were silent. Each
one adds to the `violet.fallbacks` counter, logs a warning line with its cause (the line carries
`fallback=KIND`, which the test suite reads), and adds an event to the current span.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from typing import Literal

from opentelemetry import trace

from violet.metrics import FALLBACKS

log = logging.getLogger(__name__)

Fallback = Literal[
    "fold_kept_summary",  # the fold failed: the previous summary stays until it is tried again
    "fold_promise_unknown",  # the fold named a promise it was not given: that one is ignored
    "pick_failed",  # routing had no pick from the model: the request opens new work
    "origin_failed",  # memory's origin call failed: the turn is tried again later
    "capture_stored_nothing",  # origin kept failing: the turn's words make no memory item
    "refusal",  # a model declined: the person is told plainly, nothing is remembered
    "spend_limit",  # the paying account reached a spending limit: the person is told so
    "refusal_on_main_model",  # the fast model declined a structured call; the main model took it
    "retry_budget_spent",  # the API stayed busy past the call's retry budget
    "answer_cut",  # an answer stopped at its length limit and could not be finished
    "answer_failed",  # the main model failed: the person is asked to say it again
    "work_failed",  # background work's model failed: the result says it could not finish
    "ask_failed",  # other work could not be asked: the asking work is told so, plainly
    "own_key_refused",  # a person's own key was refused: set aside, the call made as it says now
    "operator_key_missing",  # the operator pays but this replica has no key: the built-in model
    "key_unchecked",  # a key could not be checked when set: not kept, the person asked again
    "usage_dropped",  # usage could not be recorded for too long: the oldest rows were dropped
    "recall_by_words",  # the embedder was too busy for a query's vector: recall ranked on words
    "capture_refused",  # memory refused a capture's content: it is dropped, not sent again
    "capture_dropped",  # captures owed past their bounds were dropped: memory never gets them
    "fold_before_capture",  # a forced rollover folded messages whose capture is still owed
]

_lock = threading.Lock()
_counts: Counter[str] = Counter()


def fallback(kind: Fallback, cause: str, **details: object) -> None:
    """Records one fallback of `kind`; `cause` says what failed, in plain words."""
    with _lock:
        _counts[kind] += 1
    FALLBACKS.add(1, {"violet.fallback": kind})
    trace.get_current_span().add_event(
        "violet.fallback", {"violet.fallback": kind, "violet.fallback.cause": cause}
    )
    log.warning("fallback: %s (%s)", kind, cause, extra={"fallback": kind, **details})


def counts() -> Counter[str]:
    """How many fallbacks of each kind this process has recorded."""
    with _lock:
        return Counter(_counts)
