"""the lifetime of each person's routing state, which erasing the person ends

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

from violet import row_security as rls

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

ROLE = "violet_router"


def upgrade() -> None:
    op.create_table(
        "routing_lifetimes",
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("lifetime", sa.String(length=32), nullable=False),
        sa.Column("began_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("person"),
    )
    if op.get_bind().dialect.name != "postgresql":
        return
    rls.grant(ROLE, ("routing_lifetimes",))
    rls.protect("routing_lifetimes", rls.of_the_person())


def downgrade() -> None:
    op.drop_table("routing_lifetimes")
