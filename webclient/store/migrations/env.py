"""Alembic's environment: runs on the connection `webclient.store.database.migrate` hands it (never a URL of its
own, so the same code serves SQLite and PostgreSQL)."""

from __future__ import annotations

from alembic import context

from webclient.store.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
