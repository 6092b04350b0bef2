"""devices signed out: one device's sign-out, every device's at once, and the device that turned
notifications on

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("devices", sa.Column("signed_out_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column(
        "conversations", sa.Column("signed_out_before", sa.DateTime(timezone=True), nullable=True)
    )
    op.add_column(
        "push_subscriptions", sa.Column("signed_in_device", sa.String(length=64), nullable=True)
    )


def downgrade() -> None:
    with op.batch_alter_table("push_subscriptions") as table:
        table.drop_column("signed_in_device")
    with op.batch_alter_table("conversations") as table:
        table.drop_column("signed_out_before")
    with op.batch_alter_table("devices") as table:
        table.drop_column("signed_out_at")
