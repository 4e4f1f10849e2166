"""Several instances on one PostgreSQL: each instance's heartbeat (`instances`), and which instance runs each live
session (`session_leases`, a lease that expires unless its holder renews it).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "instances",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("address", sa.Text, nullable=True),
        sa.Column("started", sa.DateTime(timezone=True), nullable=False),
        sa.Column("seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("draining", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("agents", sa.Integer, nullable=False, server_default="0"),
        sa.Column("memory", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("labels", sa.Text, nullable=False, server_default=""),
    )
    op.create_table(
        "session_leases",
        sa.Column("session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("instance", sa.String(32), nullable=False),
        sa.Column("expires", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("session_leases_by_instance", "session_leases", ["instance"])


def downgrade() -> None:
    op.drop_index("session_leases_by_instance", table_name="session_leases")
    op.drop_table("session_leases")
    op.drop_table("instances")
