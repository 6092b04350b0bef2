"""trace context of messages and updates

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("trace_context", sa.String(length=400), nullable=True))

    with op.batch_alter_table("updates", schema=None) as batch_op:
        batch_op.add_column(sa.Column("trace_context", sa.String(length=400), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("updates", schema=None) as batch_op:
        batch_op.drop_column("trace_context")

    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_column("trace_context")
