"""row-level security on every table, the service's own role, the scan functions of the sweep
and the outbox

Revision ID: 0003
Revises: 0002
"""

from alembic import op

from violet import row_security as rls

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

ROLE = "violet_worker"


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    rls.grant(
        ROLE,
        ("work_sessions", "work_messages", "work_requests", "approvals", "outbox"),
        ("work_messages_id_seq", "work_requests_id_seq", "outbox_id_seq"),
    )
    for table in ("work_sessions", "work_requests", "approvals", "outbox"):
        rls.protect(table, rls.of_the_person(), scanned=True)
    rls.protect("work_messages", rls.through("session_id", "work_sessions"))
    # The sweep: work sessions with work to do and no live holder.
    rls.scan(
        ROLE,
        "worker_runnable_sessions",
        "moment timestamptz",
        "id varchar, person varchar",
        """
        SELECT s.id, s.person FROM work_sessions AS s
        WHERE (
            s.id IN (
                SELECT r.session_id FROM work_requests AS r
                WHERE r.status IN ('pending', 'running')
            )
            OR s.id IN (
                SELECT a.session_id FROM approvals AS a
                WHERE a.status IN ('approved', 'declined', 'sending')
            )
        )
        AND (s.lease_until IS NULL OR s.lease_until < moment)
        """,
    )
    # The outbox: what is due to be sent, oldest first.
    rls.scan(
        ROLE,
        "worker_due_outbox",
        "moment timestamptz, most integer",
        "id integer, person varchar",
        """
        SELECT o.id, o.person FROM outbox AS o
        WHERE o.sent_at IS NULL AND o.next_try_at <= moment
        ORDER BY o.id LIMIT most
        """,
    )
