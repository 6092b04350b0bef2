from alembic import context

from violet.database import run_migrations
from worker.tables import metadata

run_migrations(context, metadata)
