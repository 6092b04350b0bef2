"""conversations, transcript and pins

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "conversations",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("fold_failures", sa.Integer(), nullable=False),
        sa.Column("lock_holder", sa.String(length=80), nullable=True),
        sa.Column("lock_until", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("person"),
    )
    op.create_table(
        "messages",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("conversation_id", sa.String(length=40), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("author", sa.String(length=10), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("client_id", sa.String(length=200), nullable=True),
        sa.Column("text_digest", sa.String(length=64), nullable=True),
        sa.Column("reply_to", sa.String(length=200), nullable=True),
        sa.Column("answered", sa.Boolean(), nullable=False),
        sa.Column("model_conversation_id", sa.String(length=40), nullable=True),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "conversation_id", "client_id", "text_digest", name="uq_messages_idempotency"
        ),
        sa.UniqueConstraint("conversation_id", "seq", name="uq_messages_conversation_seq"),
    )
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.create_index(
            "ix_messages_unanswered", ["conversation_id", "answered"], unique=False
        )

    op.create_table(
        "model_conversations",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("conversation_id", sa.String(length=40), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reason", sa.String(length=40), nullable=False),
        sa.Column("replica", sa.String(length=80), nullable=False),
        sa.Column("carry_from_seq", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("model_conversations", schema=None) as batch_op:
        batch_op.create_index(
            "ix_model_conversations_conversation", ["conversation_id", "started_at"], unique=False
        )

    op.create_table(
        "pins",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("conversation_id", sa.String(length=40), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("ref", sa.String(length=80), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("pins", schema=None) as batch_op:
        batch_op.create_index("ix_pins_open", ["conversation_id", "closed_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("pins", schema=None) as batch_op:
        batch_op.drop_index("ix_pins_open")

    op.drop_table("pins")
    with op.batch_alter_table("model_conversations", schema=None) as batch_op:
        batch_op.drop_index("ix_model_conversations_conversation")

    op.drop_table("model_conversations")
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_index("ix_messages_unanswered")

    op.drop_table("messages")
    op.drop_table("conversations")
