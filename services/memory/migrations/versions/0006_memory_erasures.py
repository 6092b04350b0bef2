"""memory erasures: a person whose memory is being erased, so that no capture of theirs is taken

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

from violet import row_security as rls

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

ROLE = "violet_memory"


def upgrade() -> None:
    op.create_table(
        "memory_erasures",
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("person"),
    )
    if op.get_bind().dialect.name != "postgresql":
        return
    rls.grant(ROLE, ("memory_erasures",))
    rls.protect("memory_erasures", rls.of_the_person())


def downgrade() -> None:
    op.drop_table("memory_erasures")
