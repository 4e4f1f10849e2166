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
    true,
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
    Column("owner", String(200), nullable=True),  # the person's id; None: from before people (admins only)
)
Index("sessions_by_last_activity", sessions.c.last_activity)
Index("sessions_by_owner", sessions.c.owner, sessions.c.last_activity)

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
    # The number of the thread's entry this is the text of (`webclient.viewmodel.thread.Thread.entry`), which a
    # rebuild from the journal numbers the same: a search's hit links to it. None: written before migration 0006.
    Column("entry_seq", BigInteger, nullable=True),
)
Index("transcript_by_session", transcript.c.session_id, transcript.c.id)

# -- people (migration 0003) -----------------------------------------------------------------------------------------

people = Table(
    "people",
    metadata,
    # Stable: the provider's subject, the proxy's user name, "webclient:token" (token mode's; "local" before 0004).
    Column("id", String(200), primary_key=True),
    Column("name", Text, nullable=False, server_default=""),
    Column("email", Text, nullable=True),
    Column("groups", Text, nullable=False, server_default="[]"),  # JSON list, as the provider or proxy said last
    Column("admin", Boolean, nullable=False, server_default=false()),
    Column("first_seen", DateTime(timezone=True), nullable=False),
    Column("last_seen", DateTime(timezone=True), nullable=False),
)

signins = Table(
    "signins",
    metadata,
    Column("id", String(64), primary_key=True),  # the SHA-256 of the cookie's value: the store never holds the cookie
    Column("person_id", String(200), ForeignKey("people.id", ondelete="CASCADE"), nullable=False),
    Column("method", String(16), nullable=False),  # token or oidc
    Column("created", DateTime(timezone=True), nullable=False),
    Column("last_seen", DateTime(timezone=True), nullable=False),
    Column("expires", DateTime(timezone=True), nullable=False),
    Column("user_agent", Text, nullable=True),
)
Index("signins_by_person", signins.c.person_id)

signins_started = Table(
    "signins_started",
    metadata,
    Column("state", String(64), primary_key=True),  # the OpenID round trip's state, as the provider sends it back
    Column("binding", String(64), nullable=False),  # the SHA-256 of the starting browser's binding cookie
    Column("verifier", Text, nullable=False),  # PKCE's code verifier, for the token request
    Column("nonce", String(64), nullable=False),
    Column("redirect_uri", Text, nullable=False),
    Column("next_path", Text, nullable=False),
    Column("expires", DateTime(timezone=True), nullable=False),
)
Index("signins_started_by_expiry", signins_started.c.expires)

shares = Table(
    "shares",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("session_id", String(64), ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    Column("kind", String(8), nullable=False),  # person, group or link
    Column("grantee", Text, nullable=False),  # the person's id, the group's name, or the link's token
    Column("role", String(8), nullable=False),  # watch or drive
    Column("created", DateTime(timezone=True), nullable=False),
    Column("created_by", String(200), nullable=False),
)
Index("shares_by_session", shares.c.session_id)
Index("shares_by_grantee", shares.c.kind, shares.c.grantee)

audit = Table(
    "audit",
    metadata,
    # No foreign key: the server's audit log outlives a deleted session.
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("at", Double, nullable=False),  # seconds since the epoch (UTC)
    Column("session_id", String(64), nullable=True),  # None: not about one session (a sign-in, a rule)
    Column("person_id", String(200), nullable=True),  # None: the server or a rule did it
    Column("person_name", Text, nullable=True),  # the name then
    Column("action", String(32), nullable=False),  # prompt, permission, question, mode, setting, stop, share, ...
    Column("detail", Text, nullable=False, server_default="{}"),  # JSON
)
Index("audit_by_session", audit.c.session_id, audit.c.id)
Index("audit_by_at", audit.c.at)

rules = Table(
    "rules",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("owner", String(200), nullable=True),  # the person it is for; None: an admin's rule for everyone
    Column("session_id", String(64), nullable=True),  # set: for that session only
    Column("workspace", Text, nullable=True),  # set: in that folder only
    Column("agent", Text, nullable=True),  # set: for that catalogue agent only
    Column("decision", String(8), nullable=False),  # allow, ask or deny
    Column("tool_kind", String(32), nullable=True),  # read, edit, execute, ...; None: any
    Column("path_pattern", Text, nullable=True),  # fnmatch, relative to the workspace
    Column("command_pattern", Text, nullable=True),  # fnmatch on an execute tool's command
    Column("created", DateTime(timezone=True), nullable=False),
    Column("created_by", String(200), nullable=False),
)
Index("rules_by_owner", rules.c.owner)

secrets = Table(
    "secrets",
    metadata,
    Column("person_id", String(200), primary_key=True),
    Column("name", String(200), primary_key=True),  # the environment variable it becomes
    Column("value", Text, nullable=False),  # encrypted with the server's key (Fernet); never the plain value
    Column("updated", DateTime(timezone=True), nullable=False),
)

mcp_servers = Table(
    "mcp_servers",
    metadata,
    # A person's own MCP servers (migration 0009, `webclient.store.mcp_servers`).
    Column("person_id", String(200), primary_key=True),
    Column("name", String(64), primary_key=True),
    Column("kind", String(8), nullable=False),  # stdio, http or sse
    Column("is_default", Boolean, nullable=False, server_default=true()),  # New session ticks it unless unticked
    Column("definition", Text, nullable=False),  # JSON, encrypted with the server's key (Fernet), as secrets are
    Column("updated", DateTime(timezone=True), nullable=False),
)

folders = Table(
    "folders",
    metadata,
    Column("path", Text, primary_key=True),  # a folder under an agent's shared root, resolved (no symlinks)
    Column("owner", String(200), nullable=False),  # the person who first started a session in it
    Column("created", DateTime(timezone=True), nullable=False),
)

# -- several instances on one PostgreSQL (migration 0008, `webclient.store.leases`) ------------------------------------

instances = Table(
    "instances",
    metadata,
    Column("id", String(32), primary_key=True),  # made afresh by each process at start
    Column("address", Text, nullable=True),  # where the others reach it (WEBCLIENT_INSTANCE_URL); None: nowhere
    Column("started", DateTime(timezone=True), nullable=False),
    Column("seen", DateTime(timezone=True), nullable=False),  # its last heartbeat, in the database's time
    Column("draining", Boolean, nullable=False, server_default=false()),  # it stops: no new session goes there
    Column("agents", Integer, nullable=False, server_default="0"),  # agents it runs, at its last heartbeat
    Column("memory", BigInteger, nullable=False, server_default="0"),  # resident bytes, its agents' included
    Column("labels", Text, nullable=False, server_default=""),  # what it offers, comma-separated (a GPU, a region)
)

session_leases = Table(
    "session_leases",
    metadata,
    # Which instance runs the session (its agent, its live view): the one writer of its journal while it holds this.
    Column("session_id", String(64), ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True),
    Column("instance", String(32), nullable=False),
    Column("expires", DateTime(timezone=True), nullable=False),  # in the database's time; renewed by heartbeats
)
Index("session_leases_by_instance", session_leases.c.instance)
