"""Row-level security on PostgreSQL, as the services' migrations set it up.

Every table that holds a person's rows shows a transaction only the rows of the person it names
(`app.person_id`, set by `violet.database` from `violet.identity.acting_for`); naming nobody
shows nothing. The policies are forced, so they hold for the tables' owner too, except where a
table is read by one of the owner's scan functions: those few functions (SECURITY DEFINER, run
as the owner) return the ids and people that work spanning people needs, and nothing else. The
service's own role may call them; it may not read the rows they look at.

Each migration that adds such a table protects it and grants the service's role what it needs.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

# The person the transaction names; NULL (no rows) when it names nobody.
PERSON = "current_setting('app.person_id', true)"


def of_the_person(column: str = "person") -> str:
    return f"{column} = {PERSON}"


def through(column: str, parent: str, parent_key: str = "id") -> str:
    """The rule for a table whose rows belong to the person through a parent row."""
    return f"{column} IN (SELECT {parent_key} FROM {parent} WHERE {of_the_person()})"


def protect(table: str, rule: str, *, scanned: bool = False) -> None:
    """Forces `rule` on every row the table shows or takes; a `scanned` table is also readable by
    the owner, for its scan functions."""
    op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    op.execute(f"DROP POLICY IF EXISTS {table}_of_the_person ON {table}")
    op.execute(f"CREATE POLICY {table}_of_the_person ON {table} USING ({rule}) WITH CHECK ({rule})")
    if scanned:
        op.execute(
            f"CREATE POLICY {table}_scanned_by_owner ON {table} "
            "FOR SELECT TO CURRENT_USER USING (true)"
        )


def grant(role: str, tables: Sequence[str], sequences: Sequence[str] = ()) -> None:
    """What a service's role may do: use the schema, and read and write its own tables."""
    op.execute(f'GRANT USAGE ON SCHEMA "{schema()}" TO {role}')
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {', '.join(tables)} TO {role}")
    for sequence in sequences:
        op.execute(f"GRANT USAGE ON SEQUENCE {sequence} TO {role}")


def scan(role: str, name: str, arguments: str, returns: str, body: str) -> None:
    """A scan function of the owner's that only `role` may call."""
    op.execute(
        f"CREATE OR REPLACE FUNCTION {name}({arguments}) RETURNS TABLE ({returns}) "
        f"LANGUAGE sql STABLE SECURITY DEFINER "
        f'SET search_path = "{schema()}", pg_temp AS $$ {body} $$'
    )
    op.execute(f"REVOKE ALL ON FUNCTION {name}({arguments}) FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION {name}({arguments}) TO {role}")


def schema() -> str:
    return str(op.get_bind().exec_driver_sql("SELECT current_schema()").scalar())
