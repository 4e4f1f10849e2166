"""The store's tables (SQLAlchemy Core). The migrations in ``migrations/versions`` create them; keep both in step."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Double,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    false,
)

metadata = MetaData()

sessions = Table(
    "sessions",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("agent", Text, nullable=False),  # its name in the catalogue
    Column("agent_name", Text, nullable=True),  # what the agent called itself (title or name), once known
    Column("agent_command", Text, nullable=False),  # the command line that started it
    Column("workspace", Text, nullable=False),
    Column("title", Text, nullable=True),
    Column("created", DateTime(timezone=True), nullable=False),
    Column("last_activity", DateTime(timezone=True), nullable=False),
    Column("state", String(32), nullable=False),  # the turn state, or "ended"
    Column("turns", Integer, nullable=False, server_default="0"),  # turns so far
    Column("archived", Boolean, nullable=False, server_default=false()),  # hidden from the history unless asked
)
Index("sessions_by_last_activity", sessions.c.last_activity)

journal = Table(
    "journal",
    metadata,
    # The primary key (session_id, seq) is the index that reads one session in order.
    Column("session_id", String(64), ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True),
    Column("seq", BigInteger, primary_key=True, autoincrement=False),  # 1, 2, ... within the session
    # Seconds since the epoch (UTC): a float goes to both databases as it is, with no conversion per row.
    Column("at", Double, nullable=False),
    Column("kind", String(16), nullable=False),  # see webclient.session.recorder: protocol, action, terminal, ...
    Column("direction", String(8), nullable=False),  # in, out, garbage, user, agent or store
    Column("body", Text, nullable=False),  # the protocol line as sent, else JSON
)

transcript = Table(
    "transcript",
    metadata,
    # What the search over transcripts reads: one row per finished message (the prompt of a turn, each of the
    # agent's messages), written with the journal's batch. On SQLite the id is the rowid, which the FTS5 index
    # `transcript_fts` (kept in step by triggers) points at; on PostgreSQL a generated tsvector column `search`
    # with a GIN index. Neither is a column here: migration 0002 makes them, and `webclient.store.history` reads them.
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("session_id", String(64), ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    Column("seq", BigInteger, nullable=False),  # the journal's number when the message ended (its last record)
    Column("role", String(8), nullable=False),  # user or agent
    Column("text", Text, nullable=False),
)
Index("transcript_by_session", transcript.c.session_id, transcript.c.id)
