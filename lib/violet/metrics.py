"""Every metric Violet records, declared in one place (exported by `violet.telemetry`)."""

from __future__ import annotations

from opentelemetry import metrics

_meter = metrics.get_meter("violet")

TURNS = _meter.create_counter(
    "violet.turns", description="Turns of the main session, by kind (message or update)"
)
TURN_SECONDS = _meter.create_histogram(
    "violet.turn.duration", unit="s", description="From a turn's start to its stored answer"
)
FOLDS = _meter.create_counter("violet.folds", description="Folds tried, by outcome")
ROUTES = _meter.create_counter(
    "violet.route.decisions", description="Routing decisions, by outcome (existing or new)"
)
CAPTURES = _meter.create_counter(
    "violet.memory.captures",
    description="Captures memory was sent, by outcome (stored; not_stored: taken already, said "
    "before the person forgot everything, or while they are erased; refused: memory behind)",
)
ANSWER_TO_RECALLABLE = _meter.create_histogram(
    "violet.memory.answer_to_recallable",
    unit="s",
    description="From a turn's answer stored by the session to its words recallable in memory",
)
CAPTURE_RETRIES = _meter.create_counter(
    "violet.session.capture_retries",
    description="Captures memory did not take, to be sent again after a backoff, by error",
)
CAPTURE_PASS_LAG = _meter.create_histogram(
    "violet.memory.pass_lag",
    unit="s",
    description="From a turn stored by capture to its background pass done (facts made)",
)
RECALLS = _meter.create_counter("violet.memory.recalls", description="Recalls answered")
RECALL_MISSES = _meter.create_counter(
    "violet.memory.recall_misses",
    description="Turns answered without memory because recall failed or ran out of time, by error",
)
SAYS_REFUSED = _meter.create_counter(
    "violet.gateway.says_refused",
    description="Says refused before they were stored because Violet was full, by limit",
)
ERRORS = _meter.create_counter(
    "violet.errors", description="Failures a person may notice, by where they happened"
)

# The gen_ai semantic conventions' client metrics, with the bucket boundaries they advise.
MODEL_TOKENS = _meter.create_histogram(
    "gen_ai.client.token.usage",
    unit="{token}",
    description="Number of input and output tokens used, input split by prompt-cache use",
    explicit_bucket_boundaries_advisory=[4**power for power in range(14)],
)
MODEL_SECONDS = _meter.create_histogram(
    "gen_ai.client.operation.duration",
    unit="s",
    description="GenAI operation duration",
    explicit_bucket_boundaries_advisory=[0.01 * 2**power for power in range(14)],
)
FALLBACKS = _meter.create_counter(
    "violet.fallbacks",
    description="Failures Violet survived by a fallback, by kind (violet.fallbacks module)",
)
ANSWERS_MENDED = _meter.create_counter(
    "violet.answers.mended",
    description="Internal words or ids removed from Violet's text before it was stored, by kind",
)
MODEL_RETRIES = _meter.create_counter(
    "violet.model.retries",
    description="Model requests sent again, by call and by the cause of the retry",
)
MODEL_COST = _meter.create_counter(
    "violet.model.cost",
    unit="USD",
    description="What model calls cost by the price table (violet.models.prices)",
)
NOTIFICATIONS = _meter.create_counter(
    "violet.notifications",
    description="Notifications to devices, by outcome (delivered, gone, retry, failed, seen, "
    "given_up)",
)
REMINDERS_FIRED = _meter.create_counter(
    "violet.reminders.fired",
    description="Reminders' occurrences fired, by kind (reminder told, or work started)",
)
REMINDER_DELAY_SECONDS = _meter.create_histogram(
    "violet.reminders.delay",
    unit="s",
    description="From an occurrence's due time to its telling (or its work's start), by kind",
)
