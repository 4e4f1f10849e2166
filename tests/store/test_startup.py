"""A store that cannot be used stops ``python -m webclient`` with one line saying which store, what went wrong and
what to do (no traceback); a database a newer server wrote, or whose tables do not match, is refused the same way."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from tests.support.postgres import Cluster, running_cluster
from tests.support.servers import ROOT, ServerFactory, free_port, server_command
from webclient import cli
from webclient.store.database import MIGRATIONS, create_engine, known_revisions
from webclient.store.schema import metadata
from webclient.store.store import Store

ADVICE = "WEBCLIENT_STORE=off"


def refused_by_the_process(*options: str, **env: str) -> str:
    """Start ``python -m webclient`` with ``env``; it must stop at once with exit code 1 and one line on stderr,
    returned."""
    full_env = {**os.environ, "WEBCLIENT_TOKEN": secrets.token_urlsafe(16), "PYTHONPATH": str(ROOT), **env}
    full_env.pop("WEBCLIENT_AGENT", None)
    done = subprocess.run(
        server_command("--port", str(free_port()), *options),
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("webclient: "), done.stderr
    return lines[0]


def refused(*options: str, **env: str) -> str:
    """What ``python -m webclient`` says when it refuses to start with ``env``, asked of its ``main`` in this process
    (`refused_by_the_process` shows once that the process says it as one line on stderr, with exit code 1): it
    exits with that line, having printed nothing and started nothing."""
    saved = dict(os.environ)  # main writes the settings it read into the environment
    os.environ.pop("WEBCLIENT_AGENT", None)
    os.environ.update({"WEBCLIENT_TOKEN": secrets.token_urlsafe(16), **env})
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said), pytest.raises(SystemExit) as exit:
            cli.main(["--port", str(free_port()), *options])
    finally:
        os.environ.clear()
        os.environ.update(saved)
    assert isinstance(exit.value.code, str), exit.value.code  # a message: exit code 1
    assert said.getvalue() == ""
    lines = exit.value.code.splitlines()
    assert len(lines) == 1 and lines[0].startswith("webclient: "), exit.value.code
    return lines[0]


@pytest.mark.process
def test_a_sqlite_file_that_is_not_a_database(tmp_path: Path) -> None:
    (tmp_path / "webclient.sqlite3").write_text("my notes, not a database\n" * 100)
    said = refused_by_the_process(WEBCLIENT_DATA_DIR=str(tmp_path))  # once through the process: one line, exit 1
    assert f"the SQLite store {tmp_path / 'webclient.sqlite3'} cannot be opened: file is not a database" in said
    assert "--data-dir" in said and ADVICE in said
    assert refused(WEBCLIENT_DATA_DIR=str(tmp_path)) == said


def test_a_sqlite_file_that_cannot_be_opened(tmp_path: Path) -> None:
    (tmp_path / "webclient.sqlite3").mkdir()  # a folder where the file should be (root may write anywhere)
    said = refused(WEBCLIENT_DATA_DIR=str(tmp_path))
    assert f"the SQLite store {tmp_path / 'webclient.sqlite3'} cannot be opened: unable to open database file" in said
    assert ADVICE in said


def test_a_data_folder_that_cannot_be_made(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    said = refused(WEBCLIENT_DATA_DIR=str(tmp_path / "a-file" / "data"))
    assert f"the data folder {tmp_path / 'a-file' / 'data'} cannot be made (Not a directory)" in said
    assert ADVICE in said


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("not a url", "WEBCLIENT_DATABASE_URL is not a database URL"),
        ("mysql://me:hunter2@db.example/store", "the store at mysql://me:***@db.example/store: the store runs on"),
    ],
)
def test_a_database_url_the_store_cannot_use(url: str, expected: str) -> None:
    said = refused(WEBCLIENT_DATABASE_URL=url)
    assert expected in said and ADVICE in said
    assert "hunter2" not in said


def test_a_postgresql_server_that_is_not_there() -> None:
    port = free_port()  # nothing listens on it
    said = refused(WEBCLIENT_DATABASE_URL=f"postgresql://me:hunter2@127.0.0.1:{port}/store")
    assert f"the store at postgresql://me:***@127.0.0.1:{port}/store cannot be opened: Connect call failed" in said
    assert "hunter2" not in said and ADVICE in said


def test_a_postgresql_server_that_refuses_the_role_or_database(postgresql: Cluster) -> None:
    url = f"postgresql://nobody:hunter2@127.0.0.1:{postgresql.port}/postgres"
    said = refused(WEBCLIENT_DATABASE_URL=url)
    assert 'cannot be opened: role "nobody" does not exist' in said and "hunter2" not in said
    said = refused(WEBCLIENT_DATABASE_URL=f"postgresql://postgres@127.0.0.1:{postgresql.port}/no_such_store")
    assert 'cannot be opened: database "no_such_store" does not exist' in said


@pytest.fixture(scope="module")
def password_cluster() -> Iterator[Cluster]:
    """A PostgreSQL cluster that asks for a password (scram-sha-256; ``postgres``'s is ``right``), on loopback."""
    with running_cluster("webclient-pg-password-", password="right") as cluster:
        yield cluster


def test_a_postgresql_server_that_refuses_the_password(password_cluster: Cluster) -> None:
    url = f"postgresql://postgres:hunter2@127.0.0.1:{password_cluster.port}/postgres"
    said = refused(WEBCLIENT_DATABASE_URL=url)
    assert f"the store at postgresql://postgres:***@127.0.0.1:{password_cluster.port}/postgres cannot be opened" in said
    assert 'password authentication failed for user "postgres"' in said and "hunter2" not in said
    migrated(f"postgresql://postgres:right@127.0.0.1:{password_cluster.port}/postgres")  # the right one opens it


async def execute(url: str, *statements: str) -> None:
    engine = create_engine(url)
    try:
        async with engine.begin() as connection:
            for statement in statements:
                await connection.execute(text(statement))
    finally:
        await engine.dispose()


def store_env(url: str) -> dict[str, str]:
    if url.startswith("sqlite"):
        return {"WEBCLIENT_DATA_DIR": str(Path(url.split("///", 1)[1]).parent)}
    return {"WEBCLIENT_DATABASE_URL": url}


@pytest.fixture
def store_url(database_url: str) -> str:
    """``database_url``, with SQLite's file named as the server names it in its data folder."""
    if database_url.startswith("sqlite"):
        return database_url.replace("store.sqlite3", "webclient.sqlite3")
    return database_url


def migrated(url: str) -> None:
    async def open_and_close() -> None:
        await (await Store.open_url(url)).close()

    asyncio.run(open_and_close())


def test_a_database_a_newer_server_wrote_is_refused(store_url: str) -> None:
    migrated(store_url)
    asyncio.run(execute(store_url, "update alembic_version set version_num = '9000'"))
    said = refused(**store_env(store_url))
    assert f"is at revision 9000, newer than this server knows (its newest is {known_revisions()[-1]})" in said
    assert "a newer version of the web client wrote it" in said and ADVICE in said


def test_tables_made_without_migrations_are_refused(store_url: str) -> None:
    async def create() -> None:
        engine = create_engine(store_url)
        async with engine.begin() as connection:
            await connection.run_sync(metadata.create_all)
        await engine.dispose()

    asyncio.run(create())
    said = refused(**store_env(store_url))
    tables = ", ".join(sorted(metadata.tables))  # journal, sessions, transcript
    assert f"has tables ({tables}) but no alembic_version table: they were made by hand" in said


def test_tables_that_lack_a_column_are_refused(store_url: str) -> None:
    migrated(store_url)
    asyncio.run(execute(store_url, "drop index sessions_by_last_activity", "alter table sessions drop column title"))
    said = refused(**store_env(store_url))
    assert f"says it is at revision {known_revisions()[-1]} but lacks columns title of table sessions" in said


def test_the_revisions_read_from_file_names_are_alembics_own() -> None:
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory(str(MIGRATIONS))
    assert known_revisions()[-1:] == list(scripts.get_heads())
    assert known_revisions() == sorted(script.revision for script in scripts.walk_revisions())


def test_an_up_to_date_store_opens_without_importing_alembic(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite3'}"
    migrated(url)
    program = (
        "import asyncio, sys\n"
        "from webclient.store.store import Store\n"
        "async def main():\n"
        f"    await (await Store.open_url({url!r})).close()\n"
        "asyncio.run(main())\n"
        "print('alembic' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_without_a_store_the_server_imports_no_sqlalchemy() -> None:
    """SQLAlchemy takes most of a start's imports: the app and its command line load it only to open a store."""
    program = (
        "import sys, webclient.cli, webclient.web.app\nprint(sorted({'sqlalchemy', 'alembic'} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


def test_a_limit_below_zero_is_refused_as_a_flag_and_as_a_variable() -> None:
    assert (
        refused("--max-session-mb", "-1")
        == "webclient: WEBCLIENT_MAX_SESSION_MB must be 0 (no limit) or more, not '-1.0'"
    )
    assert refused(WEBCLIENT_KEEP_DAYS="soon") == "webclient: WEBCLIENT_KEEP_DAYS must be a number, not 'soon'"


def test_without_a_store_its_settings_are_not_checked(start_server: ServerFactory, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    server = start_server(WEBCLIENT_STORE="off", WEBCLIENT_DATA_DIR=str(tmp_path / "a-file" / "data"))
    assert httpx.get(server.url + "/", headers=server.headers).status_code == 200
