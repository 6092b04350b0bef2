"""the daily retention pass: when it last ran, who runs it now, and whom it goes over

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

from violet import row_security as rls

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

ROLE = "violet_session"


def upgrade() -> None:
    op.create_table(
        "retention_passes",
        sa.Column("name", sa.String(length=40), primary_key=True),
        sa.Column("done_on", sa.Date(), nullable=True),
        sa.Column("holder", sa.String(length=80), nullable=True),
        sa.Column("until", sa.DateTime(timezone=True), nullable=True),
    )
    if op.get_bind().dialect.name != "postgresql":
        return
    rls.grant(ROLE, ("retention_passes",))
    # The pass's own record names nobody: every row is every transaction's.
    rls.protect("retention_passes", "true")
    # Whom the pass goes over: people with a message older than its horizon.
    rls.scan(
        ROLE,
        "session_conversations_older_than",
        "moment timestamptz",
        "id varchar, person varchar",
        """
        SELECT c.id, c.person FROM conversations AS c
        WHERE EXISTS (
            SELECT 1 FROM messages AS m WHERE m.conversation_id = c.id AND m.at < moment
        )
        """,
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS session_conversations_older_than(timestamptz)")
    op.drop_table("retention_passes")
