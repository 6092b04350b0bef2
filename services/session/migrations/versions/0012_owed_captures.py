"""owed captures: each turn's capture into memory, kept until memory acknowledged it

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

from violet import row_security as rls

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

ROLE = "violet_session"


def upgrade() -> None:
    op.create_table(
        "owed_captures",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "conversation_id",
            sa.String(length=40),
            sa.ForeignKey("conversations.id"),
            nullable=False,
        ),
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("source_seqs", sa.JSON(), nullable=False),
        sa.Column("person_message", sa.Text(), nullable=False),
        sa.Column("violet_answer", sa.Text(), nullable=False),
        sa.Column("told", sa.Text(), nullable=False),
        sa.Column("deeds", sa.JSON(), nullable=False),
        sa.Column("sources", sa.JSON(), nullable=False),
        sa.Column("said_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("trace_context", sa.String(length=400), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("holder", sa.String(length=80), nullable=True),
        sa.Column("until", sa.DateTime(timezone=True), nullable=True),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_owed_captures_conversation", "owed_captures", ["conversation_id", "seq"])
    op.create_index("ix_owed_captures_due", "owed_captures", ["due_at"])
    if op.get_bind().dialect.name != "postgresql":
        return
    rls.grant(ROLE, ("owed_captures",), ("owed_captures_id_seq",))
    rls.protect("owed_captures", rls.of_the_person(), scanned=True)
    # Whom the sender visits: each conversation's owed captures, how many, the oldest's time.
    rls.scan(
        ROLE,
        "session_owed_captures",
        "",
        "conversation_id varchar, person varchar, owed bigint, due_at timestamptz, held_until "
        "timestamptz",
        "SELECT conversation_id, person, count(*), min(due_at), max(until) FROM owed_captures "
        "GROUP BY conversation_id, person",
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS session_owed_captures()")
    op.drop_table("owed_captures")
