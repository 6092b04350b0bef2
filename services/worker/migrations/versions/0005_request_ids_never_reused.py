"""request ids never reused on SQLite

Revision ID: 0005
Revises: 0004

A request's id names its result to the session ("result:ID"), which takes each key once. SQLite
gives a new row the highest id plus one, so once the newest request was removed (a retention
trim) the next one would take its id and its result would be dropped as a repeat. AUTOINCREMENT
never gives an id twice; PostgreSQL's sequence never does anyway.
"""

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        return
    with op.batch_alter_table(
        "work_requests", recreate="always", table_kwargs={"sqlite_autoincrement": True}
    ):
        pass


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        return
    with op.batch_alter_table("work_requests", recreate="always"):
        pass
