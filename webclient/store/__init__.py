"""The session store: each session's row and its journal, in SQLite (default) or PostgreSQL."""
