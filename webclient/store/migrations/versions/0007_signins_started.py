"""OpenID sign-ins started and not yet finished, kept in the store rather than in the process that started them: the
provider may send the browser back to another instance behind the proxy, or to this one after a restart.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "signins_started",
        sa.Column("state", sa.String(64), primary_key=True),
        sa.Column("binding", sa.String(64), nullable=False),
        sa.Column("verifier", sa.Text, nullable=False),
        sa.Column("nonce", sa.String(64), nullable=False),
        sa.Column("redirect_uri", sa.Text, nullable=False),
        sa.Column("next_path", sa.Text, nullable=False),
        sa.Column("expires", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("signins_started_by_expiry", "signins_started", ["expires"])


def downgrade() -> None:
    op.drop_index("signins_started_by_expiry", table_name="signins_started")
    op.drop_table("signins_started")
