"""request keys and claimed sends

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("work_requests", schema=None) as batch_op:
        batch_op.add_column(sa.Column("key", sa.String(length=200), nullable=True))
        batch_op.create_unique_constraint("uq_work_requests_key", ["person", "key"])

    with op.batch_alter_table("approvals", schema=None) as batch_op:
        batch_op.add_column(sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("approvals", schema=None) as batch_op:
        batch_op.drop_column("claimed_at")

    with op.batch_alter_table("work_requests", schema=None) as batch_op:
        batch_op.drop_constraint("uq_work_requests_key", type_="unique")
        batch_op.drop_column("key")
