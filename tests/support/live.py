"""The app driven in the test's own process: its pages through Starlette's ``TestClient``, a session's page socket
through ``websocket_connect``, sent the actions its buttons send and read frame by frame (as Phoenix's ``live/2`` and
``render_click/3`` drive a LiveView), with a real agent subprocess behind it.

No port, no thread of our own, no second interpreter: a test here costs the app's start (its store) and the agent's.
Where the process is the subject (signals, restarts after a death, the sandbox, nginx, the real port) use
``start_server`` (`tests.support.servers`).
"""

from __future__ import annotations

import contextlib
import gc
import html
import json
import os
import re
import secrets
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.exceptions import StarletteDeprecationWarning

from tests.support.acp_schema import journal_problems
from tests.support.servers import SCRIPTED_AGENT, migrated_store
from tests.support.urls import URLS
from tests.support.waiting import prompt_texts, records
from webclient.config import Settings
from webclient.web.app import create_app

with warnings.catch_warnings():
    # Starlette's test client would rather run on httpx2; httpx (what the project installs) still works.
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient
    from starlette.testclient import WebSocketTestSession as TestSocket


class LiveSocket:
    """A session page's socket: what the page sends, and the frames the live view pushes."""

    def __init__(self, socket: TestSocket) -> None:
        self.socket = socket
        self.unread: list[str] = []
        self.first = self.frame()
        """The whole page as the socket renders it on connect (also the first frame `frame` and `until` read)."""
        self.unread.append(self.first)
        nonce = re.search(r'id="prompt-nonce" value="([^"]+)"', self.first)
        self.nonce = nonce.group(1) if nonce else ""
        """The composer's nonce (a prompt sent twice with one nonce is one prompt)."""

    def frame(self, seconds: float = 30) -> str:
        """The next frame (HTML unescaped); fails after ``seconds`` without one."""
        if self.unread:
            return self.unread.pop(0)

        async def within() -> Any:
            with anyio.fail_after(seconds):
                return await self.socket._send_rx.receive()  # receive_text() would wait for ever

        message = self.socket.portal.call(within)
        self.socket._raise_on_close(message)
        return html.unescape(message["text"])

    def until(self, mark: str, seconds: float = 30) -> str:
        """The first frame that holds ``mark``."""
        deadline = time.monotonic() + seconds
        while mark not in (frame := self.frame(max(0.0, deadline - time.monotonic()))):
            pass
        return frame

    def send(self, action: str, **values: Any) -> None:
        """What a button of the page sends: ``{"action": ..., **values}`` (its ``hx-vals``)."""
        self.socket.send_text(json.dumps({"action": action, **values}))

    def prompt(self, text: str) -> None:
        """The composer's Send, with a nonce of its own."""
        self.send("prompt", prompt=text, nonce=secrets.token_urlsafe(8))


@dataclass
class InProcess:
    """The app of one test, its agent's record of what it received, and its workspace."""

    client: TestClient
    record_file: Path
    workspace: Path
    data_dir: Path

    def received(self) -> list[dict[str, Any]]:
        """Every JSON-RPC message the (scripted) agent received, in order."""
        return records(self.record_file)

    def prompts_received(self) -> list[str]:
        return prompt_texts(self.received())

    def new_session(self) -> str:
        """A new session of the app's agent: its page's path."""
        response = self.client.post(URLS.for_("new_session"), follow_redirects=False)
        assert response.status_code == 303, f"POST /sessions answered {response.status_code}: {response.text[:500]}"
        return str(response.headers["location"])

    @contextlib.contextmanager
    def live(self, session_path: str) -> Iterator[LiveSocket]:
        """The page socket of the session at ``session_path``, its first frame read."""
        with self.client.websocket_connect(URLS.for_("socket", session_id=session_path.rsplit("/", 1)[1])) as socket:
            yield LiveSocket(socket)


AppFactory = Callable[..., InProcess]


@pytest.fixture
def start_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppFactory]:
    """Start the app in this process on ``agent`` (a command line; ``None``: the built-in demo agent) with the
    environment ``env`` (``WEBCLIENT_*`` settings, and what the agent reads: its record file, its script)."""
    started: list[InProcess] = []
    with tempfile.TemporaryDirectory(prefix="webclient-data-") as folders, contextlib.ExitStack() as stack:

        def start(agent: str | None = SCRIPTED_AGENT, workspace: Path | None = None, **env: str) -> InProcess:
            assert not started, "one app per test: the environment its agents inherit is this process's"
            workspace = workspace or tmp_path / "workspace"
            workspace.mkdir(exist_ok=True)
            data = Path(folders)  # not under tmp_path, whose path may be longer than SQLite opens
            if "WEBCLIENT_DATA_DIR" not in env and "WEBCLIENT_DATABASE_URL" not in env:
                migrated_store(data)
            record = tmp_path / "received.jsonl"
            token = secrets.token_urlsafe(16)
            full = {
                "RECORD_FILE": str(record),
                "DEMO_AGENT_SPEED": "0",
                "WEBCLIENT_TOKEN": token,
                "WEBCLIENT_DATA_DIR": str(data),
                "WEBCLIENT_DEMO_REMOTE": "off",
                "WEBCLIENT_WORKSPACE": str(workspace),
                **env,
            }
            monkeypatch.delenv("WEBCLIENT_AGENT", raising=False)
            if agent is not None:
                full["WEBCLIENT_AGENT"] = agent
            for name, value in full.items():
                monkeypatch.setenv(name, value)  # the agents the app starts inherit this process's environment
            headers = {"Authorization": f"token {token}"}
            client = TestClient(create_app(Settings.from_env(os.environ)), base_url="http://127.0.0.1", headers=headers)
            stack.enter_context(client)
            app = InProcess(client, record, workspace, data)
            started.append(app)
            return app

        yield start
        stack.close()  # the app stopped (its agents with it) before its journal is read
        gc.unfreeze()  # what the app froze at its start (`gc.freeze`) may go with the next collection
        problems = [problem for app in started for problem in journal_problems(app.data_dir)]
    assert not problems, "the client sent what the ACP schema does not allow:\n" + "\n".join(problems)
