"""How each kind of model call is made: effort, output room, streaming, time and retries.

The 5.5 models always think (adaptively), and thinking counts toward `max_tokens`, so each kind
gets room for both. Effort is the lever on depth, speed and cost: low where a classification or
an extraction is all that is asked, medium (the models' own default) for the conversation,
high for background work. Long answers are streamed; a stream that goes quiet for `idle_s` has
stalled. A streamed call asks for its thinking `summarized`: with it `omitted`, nothing arrives
between the thinking block's start and its signature, so a long think would look like a stall;
a summary streams as the thinking goes. One call (with its retries) never takes longer than
`budget_s`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

Effort = Literal["low", "medium", "high", "xhigh", "max"]
Display = Literal["summarized", "omitted"]
CallKind = Literal["main", "work", "structured"]

# The most either configured model writes in one synchronous answer.
MAX_OUTPUT_TOKENS = 128_000


@dataclass(frozen=True)
class CallPolicy:
    effort: Effort
    max_tokens: int
    stream: bool
    attempt_s: float  # one request, from sending it to its last byte
    idle_s: float  # the longest silence a streamed answer may have
    budget_s: float  # every request of one call and the waits between them
    attempts: int  # at most this many requests for one answer

    @property
    def display(self) -> Display:
        """How the answer shows its thinking: summarized where it streams (see above)."""
        return "summarized" if self.stream else "omitted"

    def with_limits(
        self, *, attempt_s: float | None = None, attempts: int | None = None
    ) -> CallPolicy:
        """The policy with a shorter attempt or fewer tries (for tests and checks)."""
        changed = self
        if attempt_s is not None:
            changed = replace(
                changed,
                attempt_s=attempt_s,
                idle_s=min(changed.idle_s, attempt_s),
                budget_s=min(changed.budget_s, attempt_s * 4),
            )
        if attempts is not None:
            changed = replace(changed, attempts=attempts)
        return changed


POLICIES: dict[CallKind, CallPolicy] = {
    # The person waits for this one: an activity line shows after a second.
    "main": CallPolicy("medium", 16_000, True, 120.0, 60.0, 180.0, 4),
    # Unattended, and may think long: streamed, so a long answer is never cut by a timeout.
    "work": CallPolicy("high", 32_000, True, 600.0, 90.0, 900.0, 4),
    # Fold, routing pick, memory origin: short JSON answers on the fast model. The pick runs
    # inside a call between services (VIOLET_RPC_TIMEOUT_S, 30 s): all its tries fit in it.
    "structured": CallPolicy("low", 4_096, False, 20.0, 20.0, 25.0, 4),
}
