"""capture marks: how far each person's captures were taken, so that a repeat stores nothing

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

from violet import row_security as rls

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

ROLE = "violet_memory"


def upgrade() -> None:
    op.create_table(
        "capture_marks",
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("through_seq", sa.BigInteger(), nullable=False),
        sa.Column("forgotten_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("person"),
    )
    if op.get_bind().dialect.name != "postgresql":
        return
    rls.grant(ROLE, ("capture_marks",))
    rls.protect("capture_marks", rls.of_the_person())


def downgrade() -> None:
    op.drop_table("capture_marks")
