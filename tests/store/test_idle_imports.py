"""An idle server imports what its configuration uses: the default one (a SQLite store, the demo agent, token sign-in)
started and asked for its first page leaves the remote agent's client, the OIDC client, the secrets' cipher and the
encoding detector unimported, on SQLite SQLAlchemy's async engine and ORM, and what shows a session (Markdown, the
highlighter, the terminal emulator) until one is shown (`bench/idle_memory.py` measures what that saves)."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.servers import ROOT

pytestmark = pytest.mark.process  # each test starts a fresh interpreter: what it imports is the subject

# The app started (its lifespan, which opens the store) and asked for GET / over plain ASGI, as uvicorn would:
# a test client would itself import httpx.
PROGRAM = """
import asyncio, os, sys
import webclient.cli
from webclient.web.app import create_app

async def main():
    app, state, said = create_app(), {}, []
    events = asyncio.Queue()
    await events.put({"type": "lifespan.startup"})

    async def said_by_app(message):
        said.append(message)

    lifespan = asyncio.create_task(app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": state},
                                       events.get, said_by_app))
    while not said:
        await asyncio.sleep(0.01)
    assert said[-1]["type"] == "lifespan.startup.complete", said
    token = os.environ["WEBCLIENT_TOKEN"].encode()
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "path": "/",
             "raw_path": b"/", "root_path": "", "scheme": "http", "query_string": b"", "state": state,
             "headers": [(b"host", b"127.0.0.1"), (b"authorization", b"token " + token)],
             "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 80)}
    answer = []

    async def request():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def respond(message):
        answer.append(message)

    await app(scope, request, respond)
    await events.put({"type": "lifespan.shutdown"})
    await lifespan
    return answer[0]["status"]

print(asyncio.run(main()))
print(sorted(name for name in sys.argv[1:] if name in sys.modules))
"""

NOT_CONFIGURED = {
    "httpx": "the AAP client's HTTP library: for a remote agent only",
    "webclient.aap.agent": "the AAP adapter",
    "authlib": "the OIDC client: for WEBCLIENT_AUTH=oidc only",
    "joserfc": "the OIDC client's JWT library",
    "cryptography": "the secrets' cipher: at the first secret kept or opened",
    "charset_normalizer": "the encoding detector: at the first file that is not UTF-8",
    "sqlalchemy.ext.asyncio": "SQLAlchemy's async engine: for a PostgreSQL store only",
    "sqlalchemy.orm": "SQLAlchemy's ORM, which the async engine imports and the store does not use",
    "greenlet": "what SQLAlchemy's async engine runs the sync API in",
    "aiosqlite": "an async SQLite driver: the SQLite store uses the standard library's, in threads",
    "nh3": "the HTML sanitiser of rendered Markdown: at the first message shown",
    "pyte": "the terminal emulator: at the first terminal",
    "wcwidth": "pyte's character widths",
    "markdown_it": "the Markdown parser: at the first message shown, export or search",
}
NOT_SHOWN_YET = {
    "pygments": "the highlighter: at the first code block, diff or file shown (or by Alembic, through Mako, at a "
    "migration: hence asked of a store up to date)",
}


def imported_by_a_started_app(data: Path, *modules: str) -> tuple[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WEBCLIENT_TOKEN": secrets.token_urlsafe(16)}
    env["WEBCLIENT_DATA_DIR"] = str(data)
    for name in ("WEBCLIENT_AGENT", "WEBCLIENT_CONFIG", "WEBCLIENT_DATABASE_URL", "WEBCLIENT_STORE", "WEBCLIENT_AUTH"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, *modules], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    status, imported = done.stdout.strip().splitlines()
    return status, imported


def test_the_default_configuration_started_imports_no_client_it_does_not_use(tmp_path: Path) -> None:
    status, imported = imported_by_a_started_app(tmp_path / "data", *NOT_CONFIGURED)
    assert status == "200"
    assert imported == "[]", {name: NOT_CONFIGURED[name] for name in NOT_CONFIGURED if name in imported}


def test_a_store_already_up_to_date_starts_without_alembic(tmp_path: Path) -> None:
    imported_by_a_started_app(tmp_path / "data")  # made and migrated
    assert imported_by_a_started_app(tmp_path / "data", "alembic", *NOT_SHOWN_YET) == ("200", "[]")
