"""effects of tool calls, and say ids of any stored length

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "effects",
        sa.Column("conversation_id", sa.String(length=40), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("topic", sa.String(length=80), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["conversation_id"], ["conversations.id"]),
        sa.PrimaryKeyConstraint("conversation_id", "key"),
    )
    # A say's id of up to 128 characters is kept as JSON text, which escapes may make longer.
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.alter_column("client_id", type_=sa.Text(), existing_nullable=True)
        batch_op.alter_column("reply_to", type_=sa.Text(), existing_nullable=True)


def downgrade() -> None:
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.alter_column("reply_to", type_=sa.String(length=200), existing_nullable=True)
        batch_op.alter_column("client_id", type_=sa.String(length=200), existing_nullable=True)
    op.drop_table("effects")
