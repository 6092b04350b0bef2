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
CAPTURES = _meter.create_counter("violet.memory.captures", description="Turns captured")
RECALLS = _meter.create_counter("violet.memory.recalls", description="Recalls answered")
ERRORS = _meter.create_counter(
    "violet.errors", description="Failures a person may notice, by where they happened"
)
