"""row-level security on the people too (their names), and the consolidation's scan functions

Revision ID: 0003
Revises: 0002
"""

from alembic import op

from violet import row_security as rls

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

ROLE = "violet_memory"


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    rls.grant(ROLE, ("memory_items", "captured_turns", "memory_people"), ("captured_turns_id_seq",))
    for table in ("memory_items", "captured_turns"):
        rls.protect(table, rls.of_the_person())
    rls.protect("memory_people", rls.of_the_person(), scanned=True)
    # The nightly pass: everyone with a memory.
    rls.scan(
        ROLE, "memory_people_all", "", "person varchar", "SELECT p.person FROM memory_people AS p"
    )
    # The quiet consolidation: who said nothing since then and spoke after their last one.
    rls.scan(
        ROLE,
        "memory_quiet_people",
        "quiet_since timestamptz",
        "person varchar",
        """
        SELECT p.person FROM memory_people AS p
        WHERE p.last_capture_at <= quiet_since
        AND (p.consolidated_at IS NULL OR p.consolidated_at < p.last_capture_at)
        """,
    )
