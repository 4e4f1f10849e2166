"""Transcript entries: each row of the transcript names the thread's entry it is the text of, so a search's hit links
to that entry (``/sessions/ID?at=N#entry-N``). Rows written before have none and link to the session.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("transcript", sa.Column("entry_seq", sa.BigInteger, nullable=True))


def downgrade() -> None:
    op.drop_column("transcript", "entry_seq")  # SQLite drops it in place (3.35 on): the FTS5 triggers stay
