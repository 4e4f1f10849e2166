"""Token mode's one person becomes ``webclient:token``, an id no sign-in of a team can have (it was ``local``, which a
trusted proxy could give anyone: on the same store in team mode, that person owned every session of token mode).

Everything of ``local``'s moves: their sessions, their row and sign-ins, the shares naming them or made by them,
their rules, their secrets and their rows of the audit log. The ids are written out here, not imported: a migration
does what it did when it was written.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

LEGACY = "local"
TOKEN = "webclient:token"

PEOPLE_COLUMNS = ("id", "name", "email", "groups", "admin", "first_seen", "last_seen")
MOVED = (
    ("sessions", "owner"),
    ("signins", "person_id"),
    ("shares", "created_by"),
    ("audit", "person_id"),
    ("rules", "owner"),
    ("rules", "created_by"),
    ("secrets", "person_id"),
)
"""Every column that holds a person's id (but ``people.id`` and a person share's ``grantee``, moved on their own)."""


def _move(old: str, new: str) -> None:
    """Give ``old``'s row and everything that names them to ``new`` (the row first: sign-ins point at it)."""
    people = sa.table("people", *(sa.column(name) for name in PEOPLE_COLUMNS))
    existing = people.alias("existing")
    copied = sa.select(sa.literal(new), *(people.c[name] for name in PEOPLE_COLUMNS[1:])).where(
        people.c.id == old, ~sa.exists().where(existing.c.id == new)
    )
    op.execute(people.insert().from_select(list(PEOPLE_COLUMNS), copied))
    for table_name, column in MOVED:
        table = sa.table(table_name, sa.column(column))
        op.execute(table.update().where(table.c[column] == old).values({column: new}))
    shares = sa.table("shares", sa.column("kind"), sa.column("grantee"))
    op.execute(shares.update().where(shares.c.kind == "person", shares.c.grantee == old).values(grantee=new))
    op.execute(people.delete().where(people.c.id == old))


def upgrade() -> None:
    _move(LEGACY, TOKEN)


def downgrade() -> None:
    _move(TOKEN, LEGACY)
