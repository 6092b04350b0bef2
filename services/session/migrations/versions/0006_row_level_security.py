"""row-level security on every table, the service's own role, the sweep's scan function

Revision ID: 0006
Revises: 0005
"""

from alembic import op

from violet import row_security as rls

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

ROLE = "violet_session"
OF_THE_CONVERSATION = rls.through("conversation_id", "conversations")


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    rls.grant(
        ROLE,
        ("conversations", "model_conversations", "pins", "messages", "updates", "effects"),
        ("messages_id_seq", "updates_id_seq"),
    )
    rls.protect("conversations", rls.of_the_person(), scanned=True)
    rls.protect("messages", OF_THE_CONVERSATION, scanned=True)
    rls.protect("updates", OF_THE_CONVERSATION, scanned=True)
    for table in ("model_conversations", "pins", "effects"):
        rls.protect(table, OF_THE_CONVERSATION)
    # The sweep: conversations with a message not answered or an update not told.
    rls.scan(
        ROLE,
        "session_waiting_conversations",
        "",
        "id varchar, person varchar",
        """
        SELECT c.id, c.person FROM conversations AS c
        WHERE c.id IN (
            SELECT m.conversation_id FROM messages AS m WHERE NOT m.answered
            UNION SELECT u.conversation_id FROM updates AS u WHERE u.told_seq IS NULL
        )
        """,
    )
