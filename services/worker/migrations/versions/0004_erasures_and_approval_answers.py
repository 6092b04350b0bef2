"""erasures under way, and the person's answer kept on each approval

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

from violet import row_security as rls

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

ROLE = "violet_worker"

# Before this column only the status told the answer, until "done" replaced it: a claimed send
# was a yes; an unclaimed "done" is taken as a no (a yes whose relay failed before taking the
# email looks the same, and sent nothing either).
KNOWN_ANSWERS = """
UPDATE approvals SET answer = CASE
    WHEN status IN ('approved', 'sending') OR claimed_at IS NOT NULL THEN 'yes'
    WHEN status IN ('declined', 'done') THEN 'no'
END
"""


def upgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    op.create_table(
        "work_erasures",
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("person"),
    )
    with op.batch_alter_table("approvals", schema=None) as batch_op:
        batch_op.add_column(sa.Column("answer", sa.String(length=3), nullable=True))
    if not postgres:
        op.execute(KNOWN_ANSWERS)
        return
    # Everyone's approvals at once: the owner sets the policy aside within this transaction.
    op.execute("ALTER TABLE approvals NO FORCE ROW LEVEL SECURITY")
    op.execute(KNOWN_ANSWERS)
    op.execute("ALTER TABLE approvals FORCE ROW LEVEL SECURITY")
    rls.grant(ROLE, ("work_erasures",))
    rls.protect("work_erasures", rls.of_the_person())


def downgrade() -> None:
    with op.batch_alter_table("approvals", schema=None) as batch_op:
        batch_op.drop_column("answer")
    op.drop_table("work_erasures")
