"""The memory service's tables: memory items, captured turns, their changes, and who has memory.

`memory_items`, `captured_turns`, `memory_versions`, `memory_changes` and `capture_marks` hold a
person's memory (or what changed in it, or which captures it took) and are guarded by row-level
security on PostgreSQL. `memory_people`
holds no memory, only who has some and when they last spoke: the sweep and the nightly pass read
it to find whom to work on. `memory_erasures` names a person while their memory is being erased
(`memory.person_data`).
"""

from __future__ import annotations

from sqlalchemy import JSON, BigInteger, Column, Index, Integer, MetaData, String, Table, Text

from violet.clock import UtcDateTime

metadata = MetaData()

memory_items = Table(
    "memory_items",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("person", String(200), nullable=False),
    # "fact": a provenance-checked item, on the memory page. "turn": the person's own message
    # as said, recalled but not listed. "told": what Violet told the person (`memory.told`),
    # listed apart and never recalled as a memory about the person.
    Column("kind", String(10), nullable=False),
    Column("text", Text, nullable=False),
    # "you" or "violet".
    Column("origin", String(10), nullable=False),
    Column("quote", Text, nullable=False),
    Column("speaker", String(200), nullable=False, default=""),
    # Transcript seqs of the messages the item was made from.
    Column("source_seqs", JSON, nullable=False),
    # For a fact: the ids of the turn items it was made from.
    Column("turn_items", JSON, nullable=False),
    # For a turn: the person's turn item before it, read with it for context.
    Column("previous_item", String(40), nullable=True),
    # What a fact is about ("home", "my cat") and its value, when a rule can tell: a newer fact
    # on the same subject supersedes an older one.
    Column("subject", String(200), nullable=True),
    Column("subject_value", Text, nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
    Column("forgotten_at", UtcDateTime(), nullable=True),
    # A turn hidden because a fact made from it was forgotten: restoring that fact brings it back.
    Column("forgotten_with", String(40), nullable=True),
    Column("superseded_by", String(40), nullable=True),
    Index("ix_memory_items_person_kind", "person", "kind"),
)

captured_turns = Table(
    "captured_turns",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("person", String(200), nullable=False),
    Column("person_message", Text, nullable=False),
    Column("violet_answer", Text, nullable=False),
    # What Violet did in background work, as `memory.deeds.Deed` JSON texts.
    Column("deeds", JSON, nullable=True),
    # What Violet told in the turn, and the pages and documents it came from
    # (`memory.told.Source` objects).
    Column("told", Text, nullable=True),
    Column("told_sources", JSON, nullable=True),
    Column("speaker", String(200), nullable=False),
    Column("source_seqs", JSON, nullable=False),
    Column("at", UtcDateTime(), nullable=False),
    Column("captured_at", UtcDateTime(), nullable=False),
    # Set once the turn item exists; None while there is none yet (or no message to keep).
    Column("turn_item", String(40), nullable=True),
    # Set once facts were extracted (or extraction gave up after its attempts).
    Column("extracted_at", UtcDateTime(), nullable=True),
    Column("attempts", Integer, nullable=False, default=0),
    # A replica working on the turn holds it until then.
    Column("claimed_until", UtcDateTime(), nullable=True),
    Index("ix_captured_turns_person", "person", "extracted_at"),
)

memory_people = Table(
    "memory_people",
    metadata,
    Column("person", String(200), primary_key=True),
    Column("last_capture_at", UtcDateTime(), nullable=False),
    Column("consolidated_at", UtcDateTime(), nullable=True),
    # A replica consolidating the person holds them until then.
    Column("consolidating_until", UtcDateTime(), nullable=True),
)

# Every change to a person's items advances their version, so that recall on any replica learns
# from one small row whether anything changed since it last looked, and from `memory_changes`
# which items to read again.
memory_versions = Table(
    "memory_versions",
    metadata,
    Column("person", String(200), primary_key=True),
    # New whenever the row is made anew (after forgetting everything): versions of an earlier
    # epoch say nothing about this one.
    Column("epoch", String(32), nullable=False),
    Column("version", BigInteger, nullable=False),
    # Changes up to this version may no longer be listed: a replica that knows an older version
    # reads the person's memory whole.
    Column("listed_from", BigInteger, nullable=False),
)

# Each item's latest change: the version that made it. A deleted item keeps its row, so that a
# replica learns it is gone, until the nightly compaction.
memory_changes = Table(
    "memory_changes",
    metadata,
    Column("person", String(200), primary_key=True),
    Column("item", String(40), primary_key=True),
    Column("version", BigInteger, nullable=False),
    Column("changed_at", UtcDateTime(), nullable=False),
    Index("ix_memory_changes_person_version", "person", "version"),
)

# A person whose memory is being erased, from the erase's start until nothing of theirs is left:
# meanwhile no capture of theirs is taken, on any replica. A row left by an erase that stopped
# halfway keeps refusing until the erase is called again and finishes.
memory_erasures = Table(
    "memory_erasures",
    metadata,
    Column("person", String(200), primary_key=True),
    Column("started_at", UtcDateTime(), nullable=False),
)

# How far the person's captures were taken: captures come in the order of their transcript seqs,
# so one whose newest seq is not past `through_seq` is a repeat (the session sends again what it
# could not see acknowledged), stored no second time. A turn said before `forgotten_at` (the
# person forgot everything since) is not stored either. Kept when they forget everything;
# removed when they are erased.
capture_marks = Table(
    "capture_marks",
    metadata,
    Column("person", String(200), primary_key=True),
    Column("through_seq", BigInteger, nullable=False),
    Column("forgotten_at", UtcDateTime(), nullable=True),
)
