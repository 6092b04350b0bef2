"""The worker's tables: work sessions, their model conversations, requests, approvals, outbox,
and the erases under way."""

from __future__ import annotations

from sqlalchemy import (
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from violet.clock import UtcDateTime

metadata = MetaData()

# One per topic. `id` is the topic id the router and the session know it by.
work_sessions = Table(
    "work_sessions",
    metadata,
    Column("id", String(80), primary_key=True),
    Column("person", String(200), nullable=False),
    Column("title", Text, nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("last_active", UtcDateTime(), nullable=False),
    # Counts the changes to the session, so a replica sees when its loaded copy is stale.
    Column("version", Integer, nullable=False, default=0),
    # Results of the last round of tool calls gathered so far (JSON), while one of them waits.
    Column("held_results", Text, nullable=False, default="{}"),
    Column("loads", Integer, nullable=False, default=0),
    # The replica holding the conversation loaded, or NULL when it is unloaded.
    Column("loaded_by", String(80), nullable=True),
    Column("unloaded_at", UtcDateTime(), nullable=True),
    # One replica runs a work session at a time: a lease, so a dead holder blocks it only briefly.
    Column("lease_holder", String(80), nullable=True),
    Column("lease_until", UtcDateTime(), nullable=True),
    Index("ix_work_sessions_person", "person", "last_active"),
)

# The work session's own model conversation, one Messages API message a row.
work_messages = Table(
    "work_messages",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("session_id", String(80), ForeignKey("work_sessions.id"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("role", String(10), nullable=False),
    Column("content", Text, nullable=False),
    Column("request_id", Integer, nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    UniqueConstraint("session_id", "position", name="uq_work_messages_position"),
)

# What the person asked of a work session, one turn each, done in order.
work_requests = Table(
    "work_requests",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("session_id", String(80), ForeignKey("work_sessions.id"), nullable=False),
    Column("person", String(200), nullable=False),
    Column("text", Text, nullable=False),
    # What caused the request (the conversation, message and tool call): a request whose key
    # the person's work already holds is not added again.
    Column("key", String(200), nullable=True),
    # "pending", "running", "waiting" (for an approval) or "done".
    Column("status", String(10), nullable=False),
    Column("steps", Integer, nullable=False, default=0),
    Column("outcome", Text, nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("finished_at", UtcDateTime(), nullable=True),
    # The turn that handed the work over, for a span link from the late work back to it.
    Column("trace_id", String(32), nullable=True),
    Column("span_id", String(16), nullable=True),
    Index("ix_work_requests_open", "session_id", "status"),
    UniqueConstraint("person", "key", name="uq_work_requests_key"),
    # An id names its result to the session: never given twice, even after a trim (SQLite).
    sqlite_autoincrement=True,
)

# Actions held for the person's yes or no.
approvals = Table(
    "approvals",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("session_id", String(80), ForeignKey("work_sessions.id"), nullable=False),
    Column("person", String(200), nullable=False),
    Column("request_id", Integer, nullable=False),
    Column("tool_use_id", String(100), nullable=False),
    Column("action", String(40), nullable=False),
    Column("payload", Text, nullable=False),
    Column("question", Text, nullable=False),
    # "waiting", "approved" or "declined"; "sending" once an approved email is being handed to
    # the relay (claimed, so it is never handed over twice); "done" once the work session has
    # the outcome.
    Column("status", String(10), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("answered_at", UtcDateTime(), nullable=True),
    Column("claimed_at", UtcDateTime(), nullable=True),
    # The person's answer, "yes" or "no" (NULL while none came): kept past "done", which no
    # longer tells the two apart.
    Column("answer", String(3), nullable=True),
    UniqueConstraint("session_id", "tool_use_id", name="uq_approvals_call"),
    Index("ix_approvals_status", "status"),
)

# Results, approval questions and card updates, stored with the step that made them and sent
# until the peer takes them, so none is lost while the session or the router is away.
outbox = Table(
    "outbox",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("person", String(200), nullable=False),
    Column("topic", String(80), nullable=False),
    # "result", "approval" or "card".
    Column("kind", String(10), nullable=False),
    Column("key", String(200), nullable=False, unique=True),
    Column("payload", Text, nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("next_try_at", UtcDateTime(), nullable=False),
    Column("sent_at", UtcDateTime(), nullable=True),
    Index("ix_outbox_due", "sent_at", "next_try_at"),
)

# A person whose erase is under way (`worker.store.erasures`): while their row is here, nothing
# adds work of theirs. Removed when the erase ends; a row left by a crash is finished by the
# next erase of the person.
erasures = Table(
    "work_erasures",
    metadata,
    Column("person", String(200), primary_key=True),
    Column("started_at", UtcDateTime(), nullable=False),
)
