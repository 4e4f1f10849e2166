"""People: who signed in and how, who owns each session, whom it is shared with, what they did (the audit log),
the rules that answer permission questions, and each person's secrets (encrypted).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("sessions") as batch:  # SQLite cannot add a column with an index otherwise
        batch.add_column(sa.Column("owner", sa.String(200), nullable=True))
    op.create_index("sessions_by_owner", "sessions", ["owner", "last_activity"])
    op.create_table(
        "people",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("name", sa.Text, nullable=False, server_default=""),
        sa.Column("email", sa.Text, nullable=True),
        sa.Column("groups", sa.Text, nullable=False, server_default="[]"),
        sa.Column("admin", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("first_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "signins",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("person_id", sa.String(200), sa.ForeignKey("people.id", ondelete="CASCADE"), nullable=False),
        sa.Column("method", sa.String(16), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires", sa.DateTime(timezone=True), nullable=False),
        sa.Column("user_agent", sa.Text, nullable=True),
    )
    op.create_index("signins_by_person", "signins", ["person_id"])
    op.create_table(
        "shares",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("grantee", sa.Text, nullable=False),
        sa.Column("role", sa.String(8), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False),
    )
    op.create_index("shares_by_session", "shares", ["session_id"])
    op.create_index("shares_by_grantee", "shares", ["kind", "grantee"])
    op.create_table(
        "audit",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
        sa.Column("at", sa.Double, nullable=False),
        sa.Column("session_id", sa.String(64), nullable=True),
        sa.Column("person_id", sa.String(200), nullable=True),
        sa.Column("person_name", sa.Text, nullable=True),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("detail", sa.Text, nullable=False, server_default="{}"),
    )
    op.create_index("audit_by_session", "audit", ["session_id", "id"])
    op.create_index("audit_by_at", "audit", ["at"])
    op.create_table(
        "rules",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("owner", sa.String(200), nullable=True),
        sa.Column("session_id", sa.String(64), nullable=True),
        sa.Column("workspace", sa.Text, nullable=True),
        sa.Column("agent", sa.Text, nullable=True),
        sa.Column("decision", sa.String(8), nullable=False),
        sa.Column("tool_kind", sa.String(32), nullable=True),
        sa.Column("path_pattern", sa.Text, nullable=True),
        sa.Column("command_pattern", sa.Text, nullable=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False),
    )
    op.create_index("rules_by_owner", "rules", ["owner"])
    op.create_table(
        "secrets",
        sa.Column("person_id", sa.String(200), primary_key=True),
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("updated", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("secrets")
    op.drop_index("rules_by_owner", "rules")
    op.drop_table("rules")
    op.drop_index("audit_by_at", "audit")
    op.drop_index("audit_by_session", "audit")
    op.drop_table("audit")
    op.drop_index("shares_by_grantee", "shares")
    op.drop_index("shares_by_session", "shares")
    op.drop_table("shares")
    op.drop_index("signins_by_person", "signins")
    op.drop_table("signins")
    op.drop_table("people")
    op.drop_index("sessions_by_owner", "sessions")
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("owner")
