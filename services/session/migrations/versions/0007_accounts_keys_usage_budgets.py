"""people's own keys (sealed), usage and cost by day, budgets, notices to tell once

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

from violet import row_security as rls

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

ROLE = "violet_session"
TABLES = ("person_keys", "model_usage", "budgets", "account_notices")


def upgrade() -> None:
    op.create_table(
        "person_keys",
        sa.Column("person", sa.String(length=200), primary_key=True),
        sa.Column("kek_id", sa.String(length=32), nullable=False),
        sa.Column("nonce", sa.LargeBinary(), nullable=False),
        sa.Column("sealed", sa.LargeBinary(), nullable=False),
        sa.Column("ending", sa.String(length=4), nullable=False),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("refused_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "model_usage",
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("call", sa.String(length=40), nullable=False),
        sa.Column("payer", sa.String(length=16), nullable=False),
        sa.Column("model", sa.String(length=80), nullable=False),
        sa.Column("calls", sa.BigInteger(), nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cache_write_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cache_read_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("person", "day", "call", "payer", "model"),
    )
    op.create_table(
        "budgets",
        sa.Column("person", sa.String(length=200), primary_key=True),
        sa.Column("day_usd", sa.Float(), nullable=True),
        sa.Column("month_usd", sa.Float(), nullable=True),
    )
    op.create_table(
        "account_notices",
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("notice", sa.String(length=80), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("told_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("person", "notice"),
    )
    if op.get_bind().dialect.name != "postgresql":
        return
    rls.grant(ROLE, TABLES)
    rls.protect("person_keys", rls.of_the_person(), scanned=True)
    rls.protect("model_usage", rls.of_the_person(), scanned=True)
    rls.protect("budgets", rls.of_the_person())
    rls.protect("account_notices", rls.of_the_person())
    # `violet keys rotate`: who has a key sealed under an older key-encryption key.
    rls.scan(
        ROLE,
        "session_keys_to_rotate",
        "current_kek varchar",
        "person varchar",
        "SELECT person FROM person_keys WHERE kek_id <> current_kek",
    )
    # `violet usage` for everyone: the sums, never a key.
    rls.scan(
        ROLE,
        "session_usage_since",
        "since date",
        "person varchar, day date, call varchar, payer varchar, model varchar, calls bigint, "
        "input_tokens bigint, cache_write_tokens bigint, cache_read_tokens bigint, "
        "output_tokens bigint, cost_usd double precision",
        "SELECT person, day, call, payer, model, calls, input_tokens, cache_write_tokens, "
        "cache_read_tokens, output_tokens, cost_usd FROM model_usage WHERE day >= since",
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS session_keys_to_rotate(varchar)")
        op.execute("DROP FUNCTION IF EXISTS session_usage_since(date)")
    for table in reversed(TABLES):
        op.drop_table(table)
