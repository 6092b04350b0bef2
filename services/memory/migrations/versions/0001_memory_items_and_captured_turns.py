"""memory items, captured turns, people; row-level security on PostgreSQL

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# The role every connection of the service switches to: not the tables' owner, no BYPASSRLS.
SERVICE_ROLE = "violet_memory"
PROTECTED_TABLES = ("memory_items", "captured_turns")
PERSON_IS_SET = "person = current_setting('app.person_id', true)"


def upgrade() -> None:
    op.create_table(
        "memory_items",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("origin", sa.String(length=10), nullable=False),
        sa.Column("quote", sa.Text(), nullable=False),
        sa.Column("speaker", sa.String(length=200), nullable=False),
        sa.Column("source_seqs", sa.JSON(), nullable=False),
        sa.Column("turn_items", sa.JSON(), nullable=False),
        sa.Column("previous_item", sa.String(length=40), nullable=True),
        sa.Column("subject", sa.String(length=200), nullable=True),
        sa.Column("subject_value", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("forgotten_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("forgotten_with", sa.String(length=40), nullable=True),
        sa.Column("superseded_by", sa.String(length=40), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_memory_items_person_kind", "memory_items", ["person", "kind"])
    op.create_table(
        "captured_turns",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("person_message", sa.Text(), nullable=False),
        sa.Column("violet_answer", sa.Text(), nullable=False),
        sa.Column("confirmed_result", sa.Text(), nullable=True),
        sa.Column("speaker", sa.String(length=200), nullable=False),
        sa.Column("source_seqs", sa.JSON(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("captured_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("turn_item", sa.String(length=40), nullable=True),
        sa.Column("extracted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_captured_turns_person", "captured_turns", ["person", "extracted_at"])
    op.create_table(
        "memory_people",
        sa.Column("person", sa.String(length=200), nullable=False),
        sa.Column("last_capture_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("consolidated_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("consolidating_until", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("person"),
    )
    if op.get_bind().dialect.name == "postgresql":
        _guard_with_row_level_security()


def _guard_with_row_level_security() -> None:
    # Roles are cluster-wide: another schema's migration may have made it already.
    op.execute(
        f"""
        DO $$
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{SERVICE_ROLE}') THEN
                CREATE ROLE {SERVICE_ROLE} NOLOGIN NOSUPERUSER NOBYPASSRLS;
            END IF;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
        END $$
        """
    )
    op.execute(
        f"""
        DO $$
        BEGIN
            IF NOT pg_has_role(current_user, '{SERVICE_ROLE}', 'MEMBER') THEN
                EXECUTE format('GRANT {SERVICE_ROLE} TO %I', current_user);
            END IF;
            EXECUTE format('GRANT USAGE ON SCHEMA %I TO {SERVICE_ROLE}', current_schema());
        END $$
        """
    )
    tables = ", ".join((*PROTECTED_TABLES, "memory_people"))
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {tables} TO {SERVICE_ROLE}")
    op.execute(f"GRANT USAGE ON SEQUENCE captured_turns_id_seq TO {SERVICE_ROLE}")
    for table in PROTECTED_TABLES:
        op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
        op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
        op.execute(
            f"CREATE POLICY {table}_of_the_person ON {table} "
            f"USING ({PERSON_IS_SET}) WITH CHECK ({PERSON_IS_SET})"
        )
