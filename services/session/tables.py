"""The session service's tables: conversations, their model conversations, the transcript, and
each person's account with the models (their key, usage, budget)."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Date,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from violet.clock import UtcDateTime

metadata = MetaData()

conversations = Table(
    "conversations",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("person", String(200), nullable=False, unique=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("last_seq", Integer, nullable=False, default=0),
    # The rolling summary of everything before the live window, folded by the fast model.
    Column("summary", Text, nullable=False, default=""),
    # Folds that failed since the last one that worked: retried after each turn.
    Column("fold_failures", Integer, nullable=False, default=0),
    # The turn lock: one turn of a person at a time, on any replica; a lease, so a crashed
    # holder never blocks the person for longer than the lease.
    Column("lock_holder", String(80), nullable=True),
    Column("lock_until", UtcDateTime(), nullable=True),
    # Every device signed out at once (`session.devices`): a token issued before is refused.
    Column("signed_out_before", UtcDateTime(), nullable=True),
    # The person's IANA time zone, as their device last said it (hello's `tz`); None: the
    # default (`VIOLET_TIMEZONE`).
    Column("time_zone", String(64), nullable=True),
)

model_conversations = Table(
    "model_conversations",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("conversation_id", String(40), ForeignKey("conversations.id"), nullable=False),
    Column("started_at", UtcDateTime(), nullable=False),
    # "first message", "rollover" or "moved server".
    Column("reason", String(40), nullable=False),
    Column("replica", String(80), nullable=False),
    # The first transcript seq this model conversation holds live; older ones are summarised.
    Column("carry_from_seq", Integer, nullable=False, default=1),
    Index("ix_model_conversations_conversation", "conversation_id", "started_at"),
)

# What travels with every main call, whatever the window holds, until it is closed.
pins = Table(
    "pins",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("conversation_id", String(40), ForeignKey("conversations.id"), nullable=False),
    # "promise", "approval" or "work".
    Column("kind", String(20), nullable=False),
    Column("text", Text, nullable=False),
    # The worker's id for an approval or the topic of work in progress.
    Column("ref", String(80), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("closed_at", UtcDateTime(), nullable=True),
    Index("ix_pins_open", "conversation_id", "closed_at"),
)

messages = Table(
    "messages",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("conversation_id", String(40), ForeignKey("conversations.id"), nullable=False),
    Column("seq", Integer, nullable=False),
    # "you" or "violet".
    Column("author", String(10), nullable=False),
    Column("text", Text, nullable=False),
    Column("at", UtcDateTime(), nullable=False),
    # The device's id for a say (as JSON text), with a digest of its text: together, the
    # idempotency key.
    Column("client_id", Text, nullable=True),
    Column("text_digest", String(64), nullable=True),
    Column("reply_to", Text, nullable=True),
    Column("answered", Boolean, nullable=False, default=False),
    Column("model_conversation_id", String(40), nullable=True),
    # The trace the message arrived in, so its turn joins that trace on any replica.
    Column("trace_context", String(400), nullable=True),
    UniqueConstraint("conversation_id", "seq", name="uq_messages_conversation_seq"),
    UniqueConstraint("conversation_id", "client_id", "text_digest", name="uq_messages_idempotency"),
    Index("ix_messages_unanswered", "conversation_id", "answered"),
)

# Results and approval requests from background work, told to the person when the main
# session is free; stored first, so none is lost if a replica stops before telling it.
updates = Table(
    "updates",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("conversation_id", String(40), ForeignKey("conversations.id"), nullable=False),
    Column("key", String(200), nullable=False),
    Column("topic", String(80), nullable=False),
    # "result", "approval", or "check_in": Violet asking about a promise that waited too long
    # (its topic is then the promise's pin id).
    Column("kind", String(20), nullable=False),
    Column("text", Text, nullable=False),
    Column("approval_ref", String(80), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("told_seq", Integer, nullable=True),
    # The trace of the work that sent it, linked from the telling.
    Column("trace_context", String(400), nullable=True),
    # What Violet did for a result (`violet.v1.Deed` JSON objects), captured into memory once
    # told; the text itself becomes memory only as a told record, never as a fact.
    Column("deeds", JSON, nullable=True),
    # The pages and documents a result came from (`violet.v1.Source` JSON objects): what
    # Violet tells of it is attributed to them.
    Column("sources", JSON, nullable=True),
    # A reminder's occurrence (kind "reminder"): when it was due, so its telling can say that
    # it comes late.
    Column("due_at", UtcDateTime(), nullable=True),
    UniqueConstraint("conversation_id", "key", name="uq_updates_key"),
    Index("ix_updates_untold", "conversation_id", "told_seq"),
)

# Reminders and work on a schedule (`session.reminders`): open while an occurrence is to come.
reminders = Table(
    "reminders",
    metadata,
    Column("id", String(16), primary_key=True),
    Column("conversation_id", String(40), ForeignKey("conversations.id"), nullable=False),
    # What to remind of, or the work request to run at each occurrence (`work`).
    Column("text", Text, nullable=False),
    Column("work", Boolean, nullable=False),
    # The first occurrence's wall time ("2026-12-06T17:00") in `zone`, and its RFC 5545
    # recurrence ("" for once): every next occurrence is computed from these.
    Column("zone", String(64), nullable=False),
    Column("starts", String(19), nullable=False),
    Column("repeat", String(200), nullable=False),
    # The next occurrence; None once the last has fired or the reminder was cancelled.
    Column("next_at", UtcDateTime(), nullable=True),
    # Scheduled work: the occurrence whose work is still to be started (fired, not yet
    # handed to the worker).
    Column("work_owed_at", UtcDateTime(), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("cancelled_at", UtcDateTime(), nullable=True),
    Index("ix_reminders_due", "next_at"),
    Index("ix_reminders_work_owed", "work_owed_at"),
    Index("ix_reminders_conversation", "conversation_id", "next_at"),
)

# What each tool call of a turn did, by a key derived from the turn's cause and the call, written
# with the call's own changes: a turn replayed after a crash finds its calls done and repeats none.
effects = Table(
    "effects",
    metadata,
    Column("conversation_id", String(40), ForeignKey("conversations.id"), primary_key=True),
    Column("key", String(200), primary_key=True),
    # The call's result as the model saw it, and the topic of work it started, if any.
    Column("content", Text, nullable=False),
    Column("topic", String(80), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
)

# A person's own Anthropic key, sealed (`violet.keyring`): never stored in plain text.
person_keys = Table(
    "person_keys",
    metadata,
    Column("person", String(200), primary_key=True),
    Column("kek_id", String(32), nullable=False),
    Column("nonce", LargeBinary, nullable=False),
    Column("sealed", LargeBinary, nullable=False),
    Column("ending", String(4), nullable=False),
    Column("set_at", UtcDateTime(), nullable=False),
    # When a call on it was refused by its account; the key is no longer used from then on.
    Column("refused_at", UtcDateTime(), nullable=True),
)

# What each person's model calls used and cost, summed by day (UTC), call, payer and model.
model_usage = Table(
    "model_usage",
    metadata,
    Column("person", String(200), primary_key=True),
    Column("day", Date, primary_key=True),
    Column("call", String(40), primary_key=True),
    Column("payer", String(16), primary_key=True),
    Column("model", String(80), primary_key=True),
    Column("calls", BigInteger, nullable=False, default=0),
    Column("input_tokens", BigInteger, nullable=False, default=0),
    Column("cache_write_tokens", BigInteger, nullable=False, default=0),
    Column("cache_read_tokens", BigInteger, nullable=False, default=0),
    Column("output_tokens", BigInteger, nullable=False, default=0),
    Column("cost_usd", Float, nullable=False, default=0.0),
)

# A person's own limits on the operator's key, set by the operator; NULL: the setting's.
budgets = Table(
    "budgets",
    metadata,
    Column("person", String(200), primary_key=True),
    Column("day_usd", Float, nullable=True),
    Column("month_usd", Float, nullable=True),
)

# Things to tell the person once, with their next answer: a key refused, a budget nearly spent.
account_notices = Table(
    "account_notices",
    metadata,
    Column("person", String(200), primary_key=True),
    # What and for when: "key_refused:2026-12-03T10:00:00", "near:day:2026-12-03", ...
    Column("notice", String(80), primary_key=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("told_at", UtcDateTime(), nullable=True),
)

# Each person's own key for their pseudonym (`Accounts.pseudonym`): the digest that names them
# in traces and to the API. Deleted with the person, after which the digest names nobody.
pseudonym_keys = Table(
    "pseudonym_keys",
    metadata,
    Column("person", String(200), primary_key=True),
    Column("secret", LargeBinary, nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
)

# The devices a person signed in with, recorded at each device's `hello`.
devices = Table(
    "devices",
    metadata,
    Column("person", String(200), primary_key=True),
    # A digest of the device's token: the device, never the token itself.
    Column("device", String(64), primary_key=True),
    Column("signed_in_at", UtcDateTime(), nullable=False),
    Column("first_seen", UtcDateTime(), nullable=False),
    Column("last_seen", UtcDateTime(), nullable=False),
    Column("agent", String(200), nullable=False, default=""),
    # Signed out (by the person or the operator): its token is refused from then on.
    Column("signed_out_at", UtcDateTime(), nullable=True),
)

# A person's removal, from the request until every service has erased them. The name is kept
# only while the removal runs (it is resumed after a crash); then only a keyed digest of it and
# the time stay, so that a token issued before the removal is refused until tokens that old
# have expired.
removals = Table(
    "removals",
    metadata,
    Column("digest", String(64), primary_key=True),
    Column("person", String(200), nullable=True),
    Column("requested_at", UtcDateTime(), nullable=False),
    Column("finished_at", UtcDateTime(), nullable=True),
    # "person" or "operator".
    Column("requested_by", String(16), nullable=False),
    # The replica carrying the removal out: a lease, so one replica at a time does, and one that
    # stopped halfway is taken over once its lease runs out.
    Column("holder", String(80), nullable=True),
    Column("until", UtcDateTime(), nullable=True),
)

# What removed people's calls cost, summed with no person: the operator's totals stay right.
erased_usage = Table(
    "erased_usage",
    metadata,
    Column("day", Date, primary_key=True),
    Column("call", String(40), primary_key=True),
    Column("payer", String(16), primary_key=True),
    Column("model", String(80), primary_key=True),
    Column("calls", BigInteger, nullable=False, default=0),
    Column("input_tokens", BigInteger, nullable=False, default=0),
    Column("cache_write_tokens", BigInteger, nullable=False, default=0),
    Column("cache_read_tokens", BigInteger, nullable=False, default=0),
    Column("output_tokens", BigInteger, nullable=False, default=0),
    Column("cost_usd", Float, nullable=False, default=0.0),
)

# The daily retention pass (`session.retention`): the day it last ran, and the replica running it
# now, a lease, so that one replica a day goes over everyone. Names nobody.
retention_passes = Table(
    "retention_passes",
    metadata,
    Column("name", String(40), primary_key=True),
    Column("done_on", Date, nullable=True),
    Column("holder", String(80), nullable=True),
    Column("until", UtcDateTime(), nullable=True),
)

# Where each of a person's browsers (or, later, native apps) takes notifications, one per device:
# the device's own id for itself, and its push service's address with the browser's keys.
push_subscriptions = Table(
    "push_subscriptions",
    metadata,
    Column("person", String(200), primary_key=True),
    Column("device", String(128), primary_key=True),
    # "webpush" (RFC 8030); the kind names the sender that reaches it.
    Column("kind", String(16), nullable=False),
    Column("endpoint", String(1024), nullable=False),
    Column("p256dh", String(128), nullable=False),
    Column("auth", String(64), nullable=False),
    # Whether a notification may show what Violet said.
    Column("previews", Boolean, nullable=False, default=False),
    # The signed-in device (a digest of its token) that turned notifications on: signing it
    # out removes its subscription.
    Column("signed_in_device", String(64), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
)

# The conversation's followers (each a connected device, through a gateway) while they follow:
# a lease renewed as they go, so one whose replica stopped counts no longer once it runs out.
presence = Table(
    "presence",
    metadata,
    Column("follower", String(40), primary_key=True),
    Column("person", String(200), nullable=False),
    Column("until", UtcDateTime(), nullable=False),
    Index("ix_presence_person", "person", "until"),
)

# Violet's messages told while none of the person's devices followed, to be notified: written
# with the message, removed once every device of the person took the notification (or none
# needs it any more). Rows of a person sent together make one notification.
push_outbox = Table(
    "push_outbox",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("person", String(200), nullable=False),
    Column("seq", Integer, nullable=False),
    # The update it told: "result", "approval" or "check_in".
    Column("kind", String(20), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    # Not sent before: the grouping delay at first, then each retry's.
    Column("due_at", UtcDateTime(), nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    # The replica sending it now: a lease, so one replica sends a group and a stopped one's
    # rows are taken over.
    Column("holder", String(80), nullable=True),
    Column("until", UtcDateTime(), nullable=True),
    Index("ix_push_outbox_due", "due_at"),
    Index("ix_push_outbox_person", "person"),
    sqlite_autoincrement=True,
)

# Each turn's capture into memory until memory has it: written in the transaction that stores the
# turn's words (Violet's answer, or a told result), deleted once memory acknowledged it. A
# conversation's rows go to memory in the order of their seqs, held by one replica at a time (a
# lease), at least once; memory takes each once. A fold leaves these messages in the model's view
# until their capture is acknowledged (`session.fold`).
owed_captures = Table(
    "owed_captures",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("conversation_id", String(40), ForeignKey("conversations.id"), nullable=False),
    Column("person", String(200), nullable=False),
    # The newest of `source_seqs`: captures go in this order.
    Column("seq", Integer, nullable=False),
    Column("source_seqs", JSON, nullable=False),
    Column("person_message", Text, nullable=False),
    Column("violet_answer", Text, nullable=False),
    # What Violet told, and for a work result its deeds and sources (`violet.v1` JSON objects).
    Column("told", Text, nullable=False),
    Column("deeds", JSON, nullable=False),
    Column("sources", JSON, nullable=False),
    # When the person said it (or Violet told it), and when the turn's words were stored.
    Column("said_at", UtcDateTime(), nullable=False),
    Column("answered_at", UtcDateTime(), nullable=False),
    # The turn's trace: the capture's span joins it, whenever and wherever it is sent.
    Column("trace_context", String(400), nullable=True),
    Column("attempts", Integer, nullable=False, default=0),
    # Not sent before: each failed try's backoff.
    Column("due_at", UtcDateTime(), nullable=False),
    # The replica sending it now: a lease, so that one replica sends a conversation's captures,
    # in order, and a stopped one's are taken over.
    Column("holder", String(80), nullable=True),
    Column("until", UtcDateTime(), nullable=True),
    Index("ix_owed_captures_conversation", "conversation_id", "seq"),
    Index("ix_owed_captures_due", "due_at"),
    sqlite_autoincrement=True,
)
