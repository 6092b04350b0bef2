"""row-level security on every table, and the service's own role

Revision ID: 0002
Revises: 0001
"""

from alembic import op

from violet import row_security as rls

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

ROLE = "violet_router"


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    rls.grant(ROLE, ("topic_cards", "route_decisions"))
    for table in ("topic_cards", "route_decisions"):
        rls.protect(table, rls.of_the_person())
