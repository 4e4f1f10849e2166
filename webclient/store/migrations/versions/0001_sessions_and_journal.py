"""Sessions and their journals.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("agent", sa.Text, nullable=False),
        sa.Column("agent_name", sa.Text, nullable=True),
        sa.Column("agent_command", sa.Text, nullable=False),
        sa.Column("workspace", sa.Text, nullable=False),
        sa.Column("title", sa.Text, nullable=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_activity", sa.DateTime(timezone=True), nullable=False),
        sa.Column("state", sa.String(32), nullable=False),
    )
    op.create_table(
        "journal",
        sa.Column("session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("at", sa.Double, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("direction", sa.String(8), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
    )
    op.create_index("sessions_by_last_activity", "sessions", ["last_activity"])


def downgrade() -> None:
    op.drop_index("sessions_by_last_activity", "sessions")
    op.drop_table("journal")
    op.drop_table("sessions")
