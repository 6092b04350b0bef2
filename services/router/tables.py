"""The router's tables: the topic cards, the log of every routing decision, and the lifetime
of each person's routing state."""

from __future__ import annotations

from sqlalchemy import JSON, Column, Float, Index, MetaData, String, Table, Text

from violet.clock import UtcDateTime

metadata = MetaData()

# One per person the router holds anything of. Every write of a person's takes this row in its
# transaction and writes only if the `lifetime` it began under is still the row's: erasing the
# person deletes the row, so a write begun before the erasure finds it gone and is dropped, and a
# request after it begins a new lifetime, as a new person does (store.Lifetimes).
lifetimes = Table(
    "routing_lifetimes",
    metadata,
    Column("person", String(200), primary_key=True),
    Column("lifetime", String(32), nullable=False),
    Column("began_at", UtcDateTime(), nullable=False),
)

# One per work session, kept current by the worker after each of its turns.
cards = Table(
    "topic_cards",
    metadata,
    Column("person", String(200), primary_key=True),
    Column("topic", String(200), primary_key=True),
    Column("title", Text, nullable=False),
    Column("summary", Text, nullable=False),
    Column("entities", JSON, nullable=False),
    Column("last_request", Text, nullable=False),
    Column("last_outcome", Text, nullable=False),
    Column("last_active", UtcDateTime(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
    Index("ix_topic_cards_active", "person", "last_active"),
)

decisions = Table(
    "route_decisions",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("person", String(200), nullable=False),
    Column("request", Text, nullable=False),
    # The pre-filter's candidates, best first, and their scores.
    Column("candidates", JSON, nullable=False),
    Column("scores", JSON, nullable=False),
    # A candidate's topic or "new"; `topic` is the one chosen, empty for new work.
    Column("pick", String(200), nullable=False),
    Column("topic", String(200), nullable=False),
    Column("confidence", Float, nullable=False),
    Column("reason", Text, nullable=False),
    # How much the request reads as opening new work, 0 to 1.
    Column("opening", Float, nullable=False),
    Column("at", UtcDateTime(), nullable=False),
    Index("ix_route_decisions_person", "person", "at"),
)
