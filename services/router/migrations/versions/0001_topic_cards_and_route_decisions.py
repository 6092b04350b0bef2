"""topic cards and route decisions

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
        "topic_cards",
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("topic", sa.String(length=200), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("entities", sa.JSON(), nullable=False),
        sa.Column("last_request", sa.Text(), nullable=False),
        sa.Column("last_outcome", sa.Text(), nullable=False),
        sa.Column("last_active", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("person", "topic"),
    )
    with op.batch_alter_table("topic_cards", schema=None) as batch_op:
        batch_op.create_index("ix_topic_cards_active", ["person", "last_active"], unique=False)

    op.create_table(
        "route_decisions",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("request", sa.Text(), nullable=False),
        sa.Column("candidates", sa.JSON(), nullable=False),
        sa.Column("scores", sa.JSON(), nullable=False),
        sa.Column("pick", sa.String(length=200), nullable=False),
        sa.Column("topic", sa.String(length=200), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("opening", sa.Float(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("route_decisions", schema=None) as batch_op:
        batch_op.create_index("ix_route_decisions_person", ["person", "at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("route_decisions", schema=None) as batch_op:
        batch_op.drop_index("ix_route_decisions_person")
    op.drop_table("route_decisions")
    with op.batch_alter_table("topic_cards", schema=None) as batch_op:
        batch_op.drop_index("ix_topic_cards_active")
    op.drop_table("topic_cards")
