"""Alembic's migrations of the store, run at start by `webclient.store.database.migrate`."""
