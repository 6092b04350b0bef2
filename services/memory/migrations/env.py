from alembic import context

from memory.tables import metadata
from violet.database import run_migrations

run_migrations(context, metadata)
