"""reminders and work on a schedule; when a told reminder was due

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

from violet import row_security as rls

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

ROLE = "violet_session"


def upgrade() -> None:
    op.create_table(
        "reminders",
        sa.Column("id", sa.String(length=16), primary_key=True),
        sa.Column(
            "conversation_id",
            sa.String(length=40),
            sa.ForeignKey("conversations.id"),
            nullable=False,
        ),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("work", sa.Boolean(), nullable=False),
        sa.Column("zone", sa.String(length=64), nullable=False),
        sa.Column("starts", sa.String(length=19), nullable=False),
        sa.Column("repeat", sa.String(length=200), nullable=False),
        sa.Column("next_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("work_owed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("cancelled_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_reminders_due", "reminders", ["next_at"])
    op.create_index("ix_reminders_work_owed", "reminders", ["work_owed_at"])
    op.create_index("ix_reminders_conversation", "reminders", ["conversation_id", "next_at"])
    op.add_column("updates", sa.Column("due_at", sa.DateTime(timezone=True), nullable=True))
    if op.get_bind().dialect.name != "postgresql":
        return
    rls.grant(ROLE, ("reminders",))
    rls.protect("reminders", rls.through("conversation_id", "conversations"), scanned=True)
    # The firing: reminders due by the moment, or with scheduled work still to start, and whose.
    rls.scan(
        ROLE,
        "session_due_reminders",
        "moment timestamptz, most integer",
        "id varchar, conversation_id varchar, person varchar",
        """
        SELECT d.id, d.conversation_id, c.person FROM (
            SELECT id, conversation_id, next_at AS at FROM reminders WHERE next_at <= moment
            UNION ALL
            SELECT id, conversation_id, work_owed_at FROM reminders
            WHERE work_owed_at IS NOT NULL
        ) AS d JOIN conversations AS c ON c.id = d.conversation_id
        ORDER BY d.at LIMIT most
        """,
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS session_due_reminders(timestamptz, integer)")
    with op.batch_alter_table("updates") as table:
        table.drop_column("due_at")
    op.drop_table("reminders")
