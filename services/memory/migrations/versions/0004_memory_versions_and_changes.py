"""memory versions and changes: recall on any replica reads only what changed

Revision ID: 0004
Revises: 0003
"""

import uuid

import sqlalchemy as sa
from alembic import op

from violet import row_security as rls

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

ROLE = "violet_memory"
TABLES = ("memory_versions", "memory_changes")


def upgrade() -> None:
    op.create_table(
        "memory_versions",
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("epoch", sa.String(length=32), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("listed_from", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("person"),
    )
    op.create_table(
        "memory_changes",
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("item", sa.String(length=40), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("person", "item"),
    )
    op.create_index("ix_memory_changes_person_version", "memory_changes", ["person", "version"])
    # Everyone with a memory starts at version 1 with no change listed, so a replica reads their
    # memory whole once. Done before the tables are protected; the owner reads the people
    # through its scan policy.
    op.execute(
        sa.text(
            "INSERT INTO memory_versions (person, epoch, version, listed_from) "
            "SELECT person, :epoch, 1, 1 FROM memory_people"
        ).bindparams(epoch=uuid.uuid4().hex)
    )
    if op.get_bind().dialect.name != "postgresql":
        return
    rls.grant(ROLE, TABLES)
    for table in TABLES:
        rls.protect(table, rls.of_the_person())


def downgrade() -> None:
    op.drop_table("memory_changes")
    op.drop_table("memory_versions")
