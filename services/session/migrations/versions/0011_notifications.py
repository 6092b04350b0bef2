"""notifications: each device's push subscription, the conversation's followers, and the
outbox of messages to notify

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

from violet import row_security as rls

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

ROLE = "violet_session"


def upgrade() -> None:
    op.create_table(
        "push_subscriptions",
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("device", sa.String(length=128), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("endpoint", sa.String(length=1024), nullable=False),
        sa.Column("p256dh", sa.String(length=128), nullable=False),
        sa.Column("auth", sa.String(length=64), nullable=False),
        sa.Column("previews", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("person", "device"),
    )
    op.create_table(
        "presence",
        sa.Column("follower", sa.String(length=40), primary_key=True),
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("until", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_presence_person", "presence", ["person", "until"])
    op.create_table(
        "push_outbox",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("holder", sa.String(length=80), nullable=True),
        sa.Column("until", sa.DateTime(timezone=True), nullable=True),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_push_outbox_due", "push_outbox", ["due_at"])
    op.create_index("ix_push_outbox_person", "push_outbox", ["person"])
    if op.get_bind().dialect.name != "postgresql":
        return
    rls.grant(ROLE, ("push_subscriptions", "presence", "push_outbox"), ("push_outbox_id_seq",))
    rls.protect("push_subscriptions", rls.of_the_person())
    rls.protect("presence", rls.of_the_person())
    rls.protect("push_outbox", rls.of_the_person(), scanned=True)
    # Whom the sender visits: people with a notification due.
    rls.scan(
        ROLE,
        "session_push_due",
        "moment timestamptz",
        "person varchar",
        "SELECT DISTINCT person FROM push_outbox WHERE due_at <= moment",
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS session_push_due(timestamptz)")
    for table in ("push_outbox", "presence", "push_subscriptions"):
        op.drop_table(table)
