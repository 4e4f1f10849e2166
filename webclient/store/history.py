"""The history of sessions as the store keeps them: listed newest first a page at a time, found by the words of their
transcripts, archived and renamed (deleting is `webclient.store.retention.delete_sessions`).

A search takes the words of letters and digits of what a person typed (`webclient.store.matching`); a session
matches when its transcript (the ``transcript`` table: the prompts and the agent's messages) holds every word, each
as the start of a word ("test" finds "tests"), not necessarily in one message. SQLite answers through its FTS5
index, PostgreSQL through its text search (a GIN index over a generated tsvector): see migration 0002. With each
session come a few of the lines that hold the words, those with the most of them first, each with the number of the
thread's entry it was said in (``transcript.entry_seq``, noted when the turn ended): its link opens the session's page
on that entry, however long the session, with no rebuild to find it.

A page of the history is read in one hop off the event loop (`Store.history` runs it on a
`webclient.store.database.ThreadConnection`): through the store's engine, the connection, each statement and each
fetch were a hop of their own to the driver's thread (aiosqlite's then) and back, about 9 for the index page, and while
agents flood the event loop each hop waited for a pass of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, and_, exists, func, intersect, literal_column, or_, select, table, update
from sqlalchemy.engine import Connection

from webclient.people.person import Person
from webclient.store.database import Database
from webclient.store.matching import Hit, matching_lines, query_words
from webclient.store.schema import sessions, shares, transcript

PAGE_SIZE = 25
MESSAGES_READ = 8
"""Matching messages read per session to find the lines shown."""

_fts = table("transcript_fts", literal_column("rowid"))

Read = TypeVar("Read")


@dataclass(frozen=True)
class SessionRow:
    """One session's row in the store, as the history shows it."""

    id: str
    agent: str
    """Its name in the catalogue."""
    agent_name: str | None
    """What the agent called itself, once known."""
    workspace: str
    title: str | None
    created: datetime
    last_activity: datetime
    state: str
    """The turn state it last had (``ended`` once it was ended)."""
    turns: int
    archived: bool
    lines: tuple[Hit, ...] = ()
    """Of a search's result: lines of its transcript that hold the query's words, each with its entry."""
    owner: str | None = None
    """The id of the person who owns it (None: from before people)."""


@dataclass(frozen=True)
class HistoryPage:
    """One page of the history (or of a search's results)."""

    sessions: list[SessionRow]
    total: int
    """Sessions on every page together."""
    page: int
    """Its number, from 1."""
    size: int = PAGE_SIZE

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.size))


def _as_utc(when: datetime) -> datetime:
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)  # SQLite gives them back naive


def _stored(row: Any, lines: tuple[Hit, ...] = ()) -> SessionRow:
    return SessionRow(
        id=row.id,
        agent=row.agent,
        agent_name=row.agent_name,
        workspace=row.workspace,
        title=row.title,
        created=_as_utc(row.created),
        last_activity=_as_utc(row.last_activity),
        state=row.state,
        turns=row.turns,
        archived=bool(row.archived),
        lines=lines,
        owner=row.owner,
    )


def _visible(viewer: Person | None, link: str | None = None) -> list[ColumnElement[bool]]:
    """Conditions on `sessions`: those `viewer` may see (None, or an admin: every one). A person sees what they own
    and what a share names them or one of their groups in; a link's share opens a session to whoever comes with its
    token (``link``), and lists it for no one."""
    if viewer is None or viewer.admin:
        return []
    names = [
        and_(shares.c.kind == "person", shares.c.grantee == viewer.id),
        and_(shares.c.kind == "group", shares.c.grantee.in_(sorted(viewer.groups))),
    ]
    if link is not None:
        names.append(and_(shares.c.kind == "link", shares.c.grantee == link))
    return [or_(sessions.c.owner == viewer.id, exists().where(shares.c.session_id == sessions.c.id, or_(*names)))]


async def visible(engine: Database, session_id: str, viewer: Person, link: str | None = None) -> bool:
    """Whether the stored session `session_id` is one `viewer` may see (with the link token `link`)."""
    query = select(sessions.c.id).where(sessions.c.id == session_id, *_visible(viewer, link))
    async with engine.connect() as connection:
        return (await connection.execute(query)).first() is not None


def _listed(archived: bool, viewer: Person | None = None) -> list[ColumnElement[bool]]:
    shown = [] if archived else [sessions.c.archived == False]  # noqa: E712 (SQL, not Python)
    return [*shown, *_visible(viewer)]


def _page(page: int) -> int:
    return max(1, page)


def list_sessions(
    connection: Connection,
    *,
    page: int = 1,
    archived: bool = False,
    size: int = PAGE_SIZE,
    viewer: Person | None = None,
) -> HistoryPage:
    """The sessions by last activity, newest first: page `page` of `size`; archived ones too if `archived`; only
    those `viewer` may see (`_visible`)."""
    page = _page(page)
    where = _listed(archived, viewer)
    total = connection.execute(select(func.count()).select_from(sessions).where(*where)).scalar_one()
    rows = connection.execute(
        select(sessions)
        .where(*where)
        .order_by(sessions.c.last_activity.desc(), sessions.c.id)
        .limit(size)
        .offset((page - 1) * size)
    )
    return HistoryPage([_stored(row) for row in rows], total, page, size)


def _matches(dialect: str, words: Sequence[str], every: bool) -> ColumnElement[bool]:
    """The transcript rows that hold every one (or any) of `words`, as prefixes of their words."""
    if dialect == "postgresql":
        query = (" & " if every else " | ").join(f"{word}:*" for word in words)  # words are letters and digits
        return literal_column("transcript.search").op("@@")(func.to_tsquery("simple", query))
    expression = (" AND " if every else " OR ").join(f'"{word}"*' for word in words)
    hits = select(_fts.c.rowid).where(literal_column("transcript_fts").op("MATCH")(expression))
    return transcript.c.id.in_(hits)


def _holding_every(dialect: str, words: Sequence[str]) -> list[ColumnElement[bool]]:
    """Conditions on `sessions`: its transcript holds every word (each in some message)."""
    if dialect == "postgresql":
        # A test per session and word: the planner reads the GIN index for a rare word, and for a common one the
        # session's messages until one holds it. (An INTERSECT of every match reads and rechecks each matching
        # row: 8 times slower for two common words over 1,000 sessions.)
        return [
            exists().where(transcript.c.session_id == sessions.c.id, _matches(dialect, [word], True)) for word in words
        ]
    # SQLite: the sessions of each word's matches, intersected. From the index to the rows it names (a third
    # faster than ``id IN (...)`` for a common word); a correlated EXISTS would query the index once per session.
    each = [
        select(transcript.c.session_id)
        .join_from(_fts, transcript, transcript.c.id == _fts.c.rowid)
        .where(literal_column("transcript_fts").op("MATCH")(f'"{word}"*'))
        for word in words
    ]
    holding = each[0] if len(each) == 1 else select(intersect(*each).subquery().c.session_id)
    return [sessions.c.id.in_(holding)]


def search(
    connection: Connection,
    query: str,
    *,
    page: int = 1,
    archived: bool = False,
    size: int = PAGE_SIZE,
    viewer: Person | None = None,
) -> HistoryPage:
    """The sessions whose transcripts hold every word of `query`, newest first, each with its matching lines; only
    those `viewer` may see."""
    page = _page(page)
    words = query_words(query)
    if not words:
        return HistoryPage([], 0, page, size)
    dialect = connection.dialect.name
    where = [*_holding_every(dialect, words), *_listed(archived, viewer)]
    # Every match's id, newest first, in one pass over the index (a count and a page would make two).
    ordered = select(sessions.c.id).where(*where).order_by(sessions.c.last_activity.desc(), sessions.c.id)
    found = list(connection.execute(ordered).scalars())
    shown = found[(page - 1) * size : page * size]
    rows = {row.id: row for row in connection.execute(select(sessions).where(sessions.c.id.in_(shown)))}
    said = _matching_texts(connection, dialect, shown, words)
    results = [_stored(rows[key], _hits(said.get(key, []), words)) for key in shown if key in rows]
    return HistoryPage(results, len(found), page, size)


def _hits(said: list[tuple[str, int | None]], words: Sequence[str]) -> tuple[Hit, ...]:
    return matching_lines([text for text, _ in said], words, entries=[entry_seq for _, entry_seq in said])


def _matching_texts(
    connection: Connection, dialect: str, session_ids: list[str], words: Sequence[str]
) -> dict[str, list[tuple[str, int | None]]]:
    """The first `MESSAGES_READ` messages of each session that hold any of `words`, in order, each with its entry."""
    if not session_ids:
        return {}
    number = func.row_number().over(partition_by=transcript.c.session_id, order_by=transcript.c.id).label("n")
    found = (
        select(transcript.c.session_id, transcript.c.text, transcript.c.entry_seq, number)
        .where(transcript.c.session_id.in_(session_ids), _matches(dialect, words, False))
        .subquery()
    )
    rows = connection.execute(
        select(found.c.session_id, found.c.text, found.c.entry_seq)
        .where(found.c.n <= MESSAGES_READ)
        .order_by(found.c.session_id, found.c.n)
    )
    said: dict[str, list[tuple[str, int | None]]] = {}
    for session_id, text, entry_seq in rows:
        said.setdefault(session_id, []).append((text, entry_seq))
    return said


async def get(engine: Database, session_id: str) -> SessionRow | None:
    """One session's row, or None."""
    async with engine.connect() as connection:
        row = (await connection.execute(select(sessions).where(sessions.c.id == session_id))).one_or_none()
    return None if row is None else _stored(row)


async def _change(engine: Database, session_id: str, **values: Any) -> bool:
    async with engine.begin() as connection:
        result = await connection.execute(update(sessions).where(sessions.c.id == session_id).values(**values))
    return bool(result.rowcount)


async def set_archived(engine: Database, session_id: str, archived: bool) -> bool:
    """Archive (hide from the history) or bring back a session; False if there is no such session."""
    return await _change(engine, session_id, archived=archived)


async def rename(engine: Database, session_id: str, title: str | None) -> bool:
    """Give a session a title (None or blank: none); False if there is no such session."""
    return await _change(engine, session_id, title=title.strip() or None if title else None)
