"""devices recorded at hello, people's removals, removed people's usage as sums alone, and
each person's pseudonym key

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

from violet import row_security as rls

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

ROLE = "violet_session"
USAGE_SUMS = (
    "calls",
    "input_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "output_tokens",
)


def upgrade() -> None:
    op.create_table(
        "devices",
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("device", sa.String(length=64), nullable=False),
        sa.Column("signed_in_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("first_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("agent", sa.String(length=200), nullable=False),
        sa.PrimaryKeyConstraint("person", "device"),
    )
    op.create_table(
        "pseudonym_keys",
        sa.Column("person", sa.String(length=200), primary_key=True),
        sa.Column("secret", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "removals",
        sa.Column("digest", sa.String(length=64), primary_key=True),
        sa.Column("person", sa.String(length=200), nullable=True),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("requested_by", sa.String(length=16), nullable=False),
        sa.Column("holder", sa.String(length=80), nullable=True),
        sa.Column("until", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "erased_usage",
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("call", sa.String(length=40), nullable=False),
        sa.Column("payer", sa.String(length=16), nullable=False),
        sa.Column("model", sa.String(length=80), nullable=False),
        *(sa.Column(name, sa.BigInteger(), nullable=False) for name in USAGE_SUMS),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("day", "call", "payer", "model"),
    )
    if op.get_bind().dialect.name != "postgresql":
        return
    rls.grant(ROLE, ("devices", "pseudonym_keys", "removals", "erased_usage"))
    rls.protect("devices", rls.of_the_person())
    rls.protect("pseudonym_keys", rls.of_the_person())
    # The operator's records, read across people, holding no one's name once a removal ends
    # (a keyed digest) or none at all (the sums): every row is every transaction's.
    rls.protect("removals", "true")
    rls.protect("erased_usage", "true")


def downgrade() -> None:
    for table in ("erased_usage", "removals", "pseudonym_keys", "devices"):
        op.drop_table(table)
