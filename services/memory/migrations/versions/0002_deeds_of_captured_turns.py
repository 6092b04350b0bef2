"""captured turns carry deeds, no longer the free text of a work result

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
    # A result's free text waiting in a turn is dropped with its column: it may hold a page's
    # words, and only deeds of Violet's own may become memory.
    with op.batch_alter_table("captured_turns", schema=None) as batch_op:
        batch_op.add_column(sa.Column("deeds", sa.JSON(), nullable=True))
        batch_op.drop_column("confirmed_result")


def downgrade() -> None:
    with op.batch_alter_table("captured_turns", schema=None) as batch_op:
        batch_op.add_column(sa.Column("confirmed_result", sa.Text(), nullable=True))
        batch_op.drop_column("deeds")
