"""The history on both databases: sessions newest first a page at a time, the search over their transcripts with the
lines that match, archive, rename, and delete with everything a session had."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from sqlalchemy import Engine, event, func, select, text

from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.store.matching import Hit, matching_lines, query_words
from webclient.store.schema import journal, sessions, transcript
from webclient.store.store import SessionJournal, Store

SPEC = AgentSpec(AgentEntry("agent", ["my-agent"]), Path("/srv/project"))
T0 = 1_700_000_000.0


def session(store: Store, session_id: str, minute: int, *messages: tuple[str, str]) -> SessionJournal:
    """A session started `minute` minutes after T0 (its last activity, as it records nothing), with `messages`."""
    recorder = store.open_journal(session_id, "mine", SPEC, T0 + 60 * minute)
    for role, words in messages:
        recorder.words(role, words)
    return recorder


async def count(store: Store, table: str, session_id: str) -> int:
    async with store.engine.connect() as connection:
        query = text(f"select count(*) from {table} where session_id = :id").bindparams(id=session_id)
        return int((await connection.execute(query)).scalar_one())


@pytest.mark.asyncio
async def test_sessions_are_listed_by_last_activity_newest_first_a_page_at_a_time(store: Store) -> None:
    for n in range(30):
        session(store, f"s{n:02}", minute=(n * 7) % 30)  # started out of order
    first = await store.history()
    assert (first.total, first.pages, first.page) == (30, 2, 1)
    minutes = {f"s{n:02}": (n * 7) % 30 for n in range(30)}
    newest_first = sorted(minutes, key=lambda s: minutes[s], reverse=True)
    assert [s.id for s in first.sessions] == newest_first[:25]
    second = await store.history(page=2)
    assert [s.id for s in second.sessions] == newest_first[25:]
    assert (await store.history(page=3)).sessions == []
    row = first.sessions[0]
    assert (row.agent, row.workspace, row.state, row.turns, row.archived) == (
        "mine",
        "/srv/project",
        "starting",
        0,
        False,
    )
    assert row.created.timestamp() == T0 + 60 * 29 and row.last_activity.tzinfo is not None


@pytest.mark.asyncio
async def test_the_state_with_its_title_agent_and_turns_is_kept(store: Store) -> None:
    recorder = session(store, "s1", 0)
    recorder.state("idle", "Fix the parser", "Scripted agent", 3)
    (row,) = (await store.history()).sessions
    assert (row.state, row.title, row.agent_name, row.turns) == ("idle", "Fix the parser", "Scripted agent", 3)


@pytest.mark.asyncio
async def test_a_search_finds_the_sessions_that_said_every_word_newest_first(store: Store) -> None:
    session(store, "older", 1, ("user", "Make the parser faster"), ("agent", "The tokenizer was quadratic."))
    session(store, "newer", 2, ("user", "Why is the PARSER slow?"), ("agent", "Profiling shows the lexer."))
    session(store, "other", 3, ("user", "Rename the module"), ("agent", "Done: renamed parser_utils"))
    assert [s.id for s in (await store.search("parser")).sessions] == ["other", "newer", "older"]
    # Every word, each in any message of the session (not necessarily the same one).
    assert [s.id for s in (await store.search("parser tokenizer")).sessions] == ["older"]
    assert [s.id for s in (await store.search("Parser, LEXER!")).sessions] == ["newer"]
    # A word finds the words it begins: "quad" finds "quadratic", "profil" finds "Profiling".
    assert [s.id for s in (await store.search("quad")).sessions] == ["older"]
    assert [s.id for s in (await store.search("profil slow")).sessions] == ["newer"]
    assert (await store.search("parser compiler")).sessions == []
    assert (await store.search("  ,;  ")).total == 0
    assert (await store.search("parser")).total == 3


@pytest.mark.asyncio
async def test_a_result_brings_the_lines_that_hold_the_words_most_words_first(store: Store) -> None:
    answer = "\n".join(
        [
            "First I read the code.",
            "The cache is never cleared.",
            "Nothing else here.",
            "So the cache grows: I clear the cache on every reload now.",
            "The reload itself was fine.",
            "A cache test covers it.",
        ]
    )
    session(store, "s1", 0, ("user", "why does memory grow on reload?"), ("agent", answer))
    (found,) = (await store.search("cache reload")).sessions
    # The line with both words, then those said first fill up to three, shown in the order they were said.
    assert lines(found.lines) == (
        "why does memory grow on reload?",
        "The cache is never cleared.",
        "So the cache grows: I clear the cache on every reload now.",
    )
    assert all("cache" in line.lower() or "reload" in line.lower() for line in lines(found.lines))


def lines(hits: Sequence[Hit]) -> tuple[str, ...]:
    return tuple(hit.line for hit in hits)


@pytest.mark.asyncio
async def test_each_line_found_names_the_entry_it_was_said_in(store: Store) -> None:
    recorder = store.open_journal("s1", "mine", SPEC, T0)
    recorder.words("user", "Where is the parser?", 1)
    recorder.words("agent", "The parser is in lexer.py\nand its tests beside it", 7)
    recorder.words("agent", "A parser said before entries were noted")  # a row of a store before migration 0006
    (found,) = (await store.search("parser")).sessions
    assert found.lines == (
        Hit("Where is the parser?", 1),
        Hit("The parser is in lexer.py", 7),
        Hit("A parser said before entries were noted", None),
    )


def test_matching_lines_rank_by_words_held_then_keep_the_transcripts_order() -> None:
    texts = ["alpha only\nnothing\nbeta and alpha\n", "beta only\ngamma"]
    assert lines(matching_lines(texts, ["alpha", "beta"], limit=2)) == ("alpha only", "beta and alpha")
    assert matching_lines(texts, ["gam"], entries=[4, 9]) == (Hit("gamma", 9),)
    assert matching_lines(["x" * 1000 + " needle " + "y" * 1000], ["needle"])[0].line.startswith("…")
    assert query_words("Fix the FIX, don't-panic 2x_y") == ["fix", "the", "don", "t", "panic", "2x", "y"]


def test_matching_lines_are_ranked_by_the_words_they_show_not_those_written() -> None:
    texts = ["see [the docs](https://x.example/parser) on the cache", "the cache and the parser"]
    # The first line as written holds both words, as shown only one: it comes after the second.
    assert lines(matching_lines(texts, ["cache", "parser"], limit=1)) == ("the cache and the parser",)
    assert lines(matching_lines(texts, ["cache", "parser"], limit=2)) == (
        "see the docs on the cache",
        "the cache and the parser",
    )
    many = [f"line {n} says parser" for n in range(5_000)] + ["the parser and the cache"]
    assert lines(matching_lines(many, ["parser", "cache"], limit=2)) == (
        "line 0 says parser",
        "the parser and the cache",
    )


def test_matching_lines_are_the_markdown_as_the_page_reads_it() -> None:
    said = [
        "## The **parser** plan\n> - see [the `parser` docs](https://x.example/parser) and ![parser](p.png)\n"
        "| `parser` | slow |\n|---|---|\n1. a <b>parser</b> \\*here\\*"
    ]
    assert lines(matching_lines(said, ["parser"], limit=9)) == (
        "The parser plan",
        "see the parser docs and parser",
        "parser · slow",
        "a <b>parser</b> *here*",
    )


@pytest.mark.asyncio
async def test_archived_sessions_are_left_out_unless_asked_for(store: Store) -> None:
    session(store, "kept", 1, ("user", "hello archive"))
    session(store, "hidden", 2, ("user", "hello archive"))
    assert await store.set_archived("hidden", True)
    assert [s.id for s in (await store.history()).sessions] == ["kept"]
    assert [s.id for s in (await store.search("hello")).sessions] == ["kept"]
    every = (await store.history(archived=True)).sessions
    assert [(s.id, s.archived) for s in every] == [("hidden", True), ("kept", False)]
    assert [s.id for s in (await store.search("hello", archived=True)).sessions] == ["hidden", "kept"]
    assert await store.set_archived("hidden", False)
    assert (await store.history()).total == 2
    assert not await store.set_archived("no-such-session", True)


@pytest.mark.asyncio
async def test_rename_sets_the_title_and_blank_takes_it_away(store: Store) -> None:
    session(store, "s1", 0)
    assert await store.rename("s1", "  Tidy the build  ")
    assert (await store.history()).sessions[0].title == "Tidy the build"
    assert await store.rename("s1", "   ")
    assert (await store.history()).sessions[0].title is None
    assert not await store.rename("nope", "x")


@pytest.mark.asyncio
async def test_delete_takes_the_journal_and_the_words_with_the_session(store: Store) -> None:
    doomed = session(store, "doomed", 1, ("user", "remember the zebra"), ("agent", "a zebra, noted"))
    doomed.record("protocol", "out", '{"jsonrpc": "2.0"}')
    session(store, "kept", 2, ("user", "a zebra too"))
    await store.flush()
    assert (await count(store, "journal", "doomed"), await count(store, "transcript", "doomed")) == (1, 2)
    await store.delete("doomed")
    assert (await count(store, "journal", "doomed"), await count(store, "transcript", "doomed")) == (0, 0)
    assert [s.id for s in (await store.search("zebra")).sessions] == ["kept"]
    assert await store.session_row("doomed") is None
    await store.delete("doomed")  # again: nothing to do
    async with store.engine.connect() as connection:
        if store.engine.dialect.name == "sqlite":  # the index forgot the deleted rows too, not only the table
            indexed = "select count(*) from transcript_fts where transcript_fts match 'zebra'"
            assert (await connection.execute(text(indexed))).scalar_one() == 1
        assert (await connection.execute(select(func.count()).select_from(sessions))).scalar_one() == 1
        assert (await connection.execute(select(func.count()).select_from(journal))).scalar_one() == 0


@pytest.mark.asyncio
async def test_words_are_written_with_the_journals_batch_numbered_after_its_last_record(store: Store) -> None:
    recorder = session(store, "s1", 0)
    recorder.record("protocol", "out", "{}")
    recorder.record("protocol", "in", "{}")
    recorder.words("user", "nul\0 and a lone \udcff surrogate")
    recorder.words("agent", "   ")  # nothing to find: not kept
    transactions = store.writer.transactions
    await recorder.flush()
    assert store.writer.transactions == transactions + 1  # one batch: the session, its journal and its words
    async with store.engine.connect() as connection:
        rows = list(await connection.execute(select(transcript.c.seq, transcript.c.role, transcript.c.text)))
    assert rows == [(2, "user", "nul\\u0000 and a lone \\udcff surrogate")]
    assert [s.id for s in (await store.search("surrogate")).sessions] == ["s1"]


@pytest.mark.asyncio
async def test_a_huge_message_is_kept_for_the_search_cut_and_the_batch_goes_through(store: Store) -> None:
    # PostgreSQL refuses a tsvector over 1 MB: the whole batch (the journal too) would be lost with it.
    recorder = session(store, "s1", 0)
    huge = " ".join(f"word{n}" for n in range(400_000))  # 3 MB of distinct words
    recorder.words("agent", "needle " + huge)
    recorder.record("protocol", "in", "{}")
    await recorder.flush()
    assert await count(store, "journal", "s1") == 1
    assert [s.id for s in (await store.search("needle")).sessions] == ["s1"]
    assert (await store.search("word399999")).total == 0  # past what is kept


@pytest.mark.asyncio
async def test_the_history_waits_for_a_new_sessions_row_but_not_for_a_backlog_of_journal_rows(store: Store) -> None:
    store.writer.batch_rows = 20
    flooding = session(store, "flood", 0)
    for n in range(5_000):  # an agent's flood, taken while the writer cannot run
        flooding.record("protocol", "in", f'{{"n": {n}}}')
    session(store, "new", 1).state("idle", "Just started", None, 0)
    page = await store.history()  # the first batch brings both rows; 249 more follow
    assert [(s.id, s.title) for s in page.sessions] == [("flood", None), ("new", "Just started")]
    assert await count(store, "journal", "flood") < 5_000  # still on their way
    await flooding.flush()
    assert await count(store, "journal", "flood") == 5_000


@pytest.mark.asyncio
async def test_a_page_of_the_history_and_of_a_search_is_read_off_the_event_loop(store: Store) -> None:
    # Through the async engine, each statement was run from the event loop's thread (and its driver's round trips
    # each waited for a pass of a busy loop): the reader runs them all in a thread of its own.
    session(store, "s1", 0, ("user", "find the parser"))
    await store.flush()
    threads: list[threading.Thread] = []

    def executed(*_: object) -> None:
        threads.append(threading.current_thread())

    event.listen(Engine, "before_cursor_execute", executed)
    try:
        assert [s.id for s in (await store.history()).sessions] == ["s1"]
        assert [s.id for s in (await store.search("parser")).sessions] == ["s1"]
    finally:
        event.remove(Engine, "before_cursor_execute", executed)
    assert len(threads) >= 4  # a count and a page, then the matches, their rows and their lines
    assert threading.main_thread() not in threads
