"""History and search: each session's turns and archived flag, and the words of its messages, indexed.

The index differs by database (the only DDL written by hand here): SQLite keeps an external-content FTS5 table
over ``transcript`` (rowid = ``transcript.id``), kept in step by triggers, so a cascade that deletes a session's
rows takes them out of the index too; PostgreSQL keeps a generated ``tsvector`` column with a GIN index. Both
tokenise the same way as far as they can: words of letters and digits, no stemming, no stop words ('simple'), so
a search finds the same sessions on either.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

SQLITE_UP = [
    "CREATE VIRTUAL TABLE transcript_fts USING fts5("
    "text, content='transcript', content_rowid='id', tokenize='unicode61 remove_diacritics 2')",
    "CREATE TRIGGER transcript_fts_insert AFTER INSERT ON transcript BEGIN "
    "INSERT INTO transcript_fts(rowid, text) VALUES (new.id, new.text); END",
    "CREATE TRIGGER transcript_fts_delete AFTER DELETE ON transcript BEGIN "
    "INSERT INTO transcript_fts(transcript_fts, rowid, text) VALUES ('delete', old.id, old.text); END",
    "CREATE TRIGGER transcript_fts_update AFTER UPDATE ON transcript BEGIN "
    "INSERT INTO transcript_fts(transcript_fts, rowid, text) VALUES ('delete', old.id, old.text); "
    "INSERT INTO transcript_fts(rowid, text) VALUES (new.id, new.text); END",
]
SQLITE_DOWN = [
    "DROP TRIGGER transcript_fts_update",
    "DROP TRIGGER transcript_fts_delete",
    "DROP TRIGGER transcript_fts_insert",
    "DROP TABLE transcript_fts",
]
POSTGRESQL_UP = [
    "ALTER TABLE transcript ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED",
    "CREATE INDEX transcript_search ON transcript USING gin (search)",
]
POSTGRESQL_DOWN = ["DROP INDEX transcript_search", "ALTER TABLE transcript DROP COLUMN search"]


def upgrade() -> None:
    op.add_column("sessions", sa.Column("turns", sa.Integer, nullable=False, server_default="0"))
    op.add_column("sessions", sa.Column("archived", sa.Boolean, nullable=False, server_default=sa.false()))
    op.create_table(
        "transcript",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
        sa.Column("session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("role", sa.String(8), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
    )
    op.create_index("transcript_by_session", "transcript", ["session_id", "id"])
    dialect = op.get_bind().dialect.name
    for statement in SQLITE_UP if dialect == "sqlite" else POSTGRESQL_UP if dialect == "postgresql" else []:
        op.execute(statement)


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    for statement in SQLITE_DOWN if dialect == "sqlite" else POSTGRESQL_DOWN if dialect == "postgresql" else []:
        op.execute(statement)
    op.drop_index("transcript_by_session", "transcript")
    op.drop_table("transcript")
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("archived")
        batch.drop_column("turns")
