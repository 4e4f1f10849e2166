"""The real server as tests run it: started on a free port with a test agent, signed in, stopped, and its processes."""

from __future__ import annotations

import concurrent.futures
import gc
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.support.acp_schema import journal_problems
from tests.support.waiting import prompt_texts, records

ROOT = Path(__file__).resolve().parents[2]


AGENTS = ROOT / "tests" / "agents"


SCRIPTED_AGENT = f"{sys.executable} {AGENTS / 'scripted_agent.py'}"


CHROMIUM = "/usr/bin/chromium"


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


_TEMPLATE: list[Path] = []


class Tier:
    """Whether the running test may start the server as a process of its own. Such a process costs about a second
    of a core; ``make test-fast`` leaves out the tests that start one, which say so with the ``process`` marker (or
    run only in ``make test``: browser, slow, alone). An unmarked test that starts one fails here, not by making the
    fast tier slow unseen. Set for each test by ``tests/conftest.py``."""

    process_allowed = True


def server_command(*options: str) -> list[str]:
    """``python -m webclient OPTIONS``, in a test whose tier allows a process of the server (`Tier`)."""
    assert Tier.process_allowed, (
        "this test starts the server as a process: mark it `process` (the process is its subject), "
        "or drive the app in the test's process (`start_app`, or `start_server` without process=True)"
    )
    return [sys.executable, "-m", "webclient", *options]


def off_the_loop(call: Callable[[], Any]) -> Any:
    """``call()`` in a thread of its own: what runs an event loop of its own (``asyncio.run``) cannot run where one
    runs already, as Playwright's does in a browser test."""
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        return thread.submit(call).result()


def migrated_store(folder: Path) -> Path:
    """Put a store already at the newest migration in ``folder`` (a fresh data folder a test server made for itself):
    made once per test process and copied, so that each server does not run every migration again (a second of
    Alembic on a busy machine). Tests of migrating give their own folder, which this leaves alone."""
    import asyncio

    from webclient.store.database import create_engine, migrate

    if not _TEMPLATE:
        template = Path(tempfile.mkdtemp(prefix="webclient-template-")) / "webclient.sqlite3"

        async def make() -> None:
            engine = create_engine(f"sqlite+aiosqlite:///{template}")
            await migrate(engine)
            await engine.dispose()  # the write-ahead log checkpointed into the file

        off_the_loop(lambda: asyncio.run(make()))
        _TEMPLATE.append(template)
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "webclient.sqlite3").exists():
        shutil.copyfile(_TEMPLATE[0], folder / "webclient.sqlite3")
    return folder


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    """A running ``webclient`` process."""

    url: str
    process: subprocess.Popen[bytes] | None
    """``python -m webclient``, or None for a server run in the test's own process (`launch_in_thread`)."""
    record_file: Path
    workspace: Path
    token: str
    clients: list[httpx.Client] = field(default_factory=list)
    data_dir: Path | None = None
    """Where the server keeps its store (deleted when it is stopped)."""
    store_dir: Path | None = None
    """Where its SQLite store is, this folder or one the test gave, whose journal is checked when it stops."""
    uds: Path | None = None
    """The unix socket it listens on instead of its port (``WEBCLIENT_UDS``)."""
    in_thread: InThread | None = None
    """The uvicorn server and its thread, when it runs in the test's process."""

    @property
    def headers(self) -> dict[str, str]:
        """What a script sends to be let in (the sign-in token, as ``Authorization: token ...``)."""
        return {"Authorization": f"token {self.token}"}

    def http(self) -> httpx.Client:
        """An HTTP client signed in the way scripts are (the token in a header); closed with the server."""
        transport = httpx.HTTPTransport(uds=str(self.uds)) if self.uds is not None else None
        client = httpx.Client(base_url=self.url, headers=self.headers, transport=transport)
        self.clients.append(client)
        return client

    def sign_in_url(self, url: str = "/") -> str:
        """``url`` (a path of this server, or a whole URL) with the sign-in token, as the server prints it at start:
        opening it in a browser signs that browser in and lands on ``url``."""
        url = url if url.startswith("http") else self.url + url
        return f"{url}{'&' if '?' in url else '?'}token={self.token}"

    def received(self) -> list[dict[str, Any]]:
        """Every JSON-RPC message the (scripted) agent received, in order."""
        return records(self.record_file)

    def prompts_received(self) -> list[str]:
        """The text of every prompt the (scripted) agent received, in order."""
        return prompt_texts(self.received())

    def wait_received(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for message in self.received():
                if predicate(message):
                    return message
            time.sleep(0.05)
        raise AssertionError(f"the agent never received the expected message; it got: {self.received()}")


ServerFactory = Callable[..., Server]


def live_processes() -> Iterator[tuple[int, int, int]]:
    """(pid, parent pid, process group) of every live process, read from /proc (independently of the code under test).

    Zombies are left out on purpose: orphans are reaped by PID 1, which in some containers never happens.
    """
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[0] not in (b"Z", b"X"):
                yield int(entry), int(fields[1]), int(fields[2])


def live_members(pgid: int) -> list[int]:
    """Pids of live processes in process group ``pgid``."""
    return [pid for pid, _, group in live_processes() if group == pgid]


def launch_server(
    port: int,
    token: str,
    record: Path,
    workspace: Path,
    options: list[str],
    env: dict[str, str],
    output: int,
    in_thread: bool = False,
) -> Server:
    """Start ``python -m webclient --port PORT OPTIONS`` and wait until it answers HTTP; stopped if it never does.

    ``output`` is where its stdout and stderr go (``subprocess.PIPE`` puts them in the error of an early exit).
    ``in_thread``: serve it from this process instead (`InThread`) unless it `needs_a_process`; OPTIONS may then be
    only ``--agent`` and ``--workspace``.
    """
    # Each server keeps its store in a folder of its own, never in the user's data folder (nor under the test's
    # workspace, whose path may be longer than SQLite opens).
    data = tempfile.mkdtemp(prefix="webclient-data-")
    if "WEBCLIENT_DATA_DIR" not in env and "WEBCLIENT_DATABASE_URL" not in env:
        migrated_store(Path(data))
    full_env = {
        **os.environ,
        "RECORD_FILE": str(record),
        "WEBCLIENT_TOKEN": token,
        "WEBCLIENT_DATA_DIR": data,
        "WEBCLIENT_DEMO_REMOTE": "off",  # its server only where a test asks for it
        "WEBCLIENT_DRAIN_SECONDS": "0",  # stopped at once, as a test expects (tests/web/test_drain.py drains)
        **env,
    }
    full_env.pop("WEBCLIENT_AGENT", None)
    if in_thread and not needs_a_process(full_env):
        flags = dict(zip(options[::2], options[1::2], strict=True))
        full_env.update({"WEBCLIENT_AGENT": flags.pop("--agent", ""), "WEBCLIENT_PORT": str(port)})
        full_env.update({"WEBCLIENT_WORKSPACE": flags.pop("--workspace")} if "--workspace" in flags else {})
        assert not flags, f"options a server in the test's process cannot take: {flags}"
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        store = None if "WEBCLIENT_DATABASE_URL" in env else Path(full_env["WEBCLIENT_DATA_DIR"])
        server = Server(
            f"http://127.0.0.1:{port}", None, record, workspace, token, data_dir=Path(data), store_dir=store
        )
        return launch_in_thread(sock, server, full_env)
    process = subprocess.Popen(
        server_command("--port", str(port), *options), cwd=ROOT, env=full_env, stdout=output, stderr=subprocess.STDOUT
    )
    store_dir = None if "WEBCLIENT_DATABASE_URL" in env else Path(full_env["WEBCLIENT_DATA_DIR"])
    uds = Path(env["WEBCLIENT_UDS"]) if env.get("WEBCLIENT_UDS") else None
    server = Server(
        f"http://127.0.0.1:{port}", process, record, workspace, token, data_dir=Path(data), store_dir=store_dir, uds=uds
    )
    deadline = time.monotonic() + 20
    while True:
        if process.poll() is not None:
            said = process.stdout.read().decode() if process.stdout else ""
            raise RuntimeError(f"the server exited early ({process.returncode}):\n{said}")
        try:
            if uds is not None:
                with socket.socket(socket.AF_UNIX) as probe:
                    probe.connect(str(uds))  # refused until uvicorn listens (the server binds it earlier)
                return server
            httpx.get(server.url + "/", timeout=1)  # any answer (a sign-in page too) means it is up
            return server
        except (httpx.TransportError, OSError):
            if time.monotonic() > deadline:
                stop_server(server)
                raise
            time.sleep(0.1)


class InThread:
    """The app of ``python -m webclient`` served by uvicorn on a real port from a thread of the test's process: the
    same settings (read from the same environment), checks, store and agents, without a second interpreter importing
    the package (2.5-4.4 s a server as a process, a tenth of that here).

    The environment is the process's own (the agents inherit it), so one such server runs at a time: while it runs
    ``os.environ`` is the server's, and it is put back when it stops.
    """

    running: InThread | None = None

    def __init__(self, env: dict[str, str], sock: socket.socket) -> None:
        import uvicorn

        from webclient import cli
        from webclient.config import Settings
        from webclient.web.app import create_app
        from webclient.web.page_sockets import PageSocketProtocol

        self.saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(env)
        try:
            settings = Settings.from_env()
            cli.Access.from_settings(settings)
            cli.TrustedHeader.from_settings(settings)
            cli.check_catalogue(settings)
            off_the_loop(lambda: cli.check_store(settings))  # asyncio.run: Playwright's loop may be running here
            cli.check_sandbox(settings)
            config = uvicorn.Config(
                create_app(settings),
                log_config=None,
                timeout_graceful_shutdown=cli.GRACEFUL_SECONDS,
                proxy_headers=not settings.trusted_proxies,
                ws_max_size=cli.prompt_body_bytes(settings),
                ws=PageSocketProtocol,
            )
        except BaseException:
            self.restore()
            raise
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        InThread.running = self
        self.thread.start()

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)
        self.restore()
        assert not self.thread.is_alive(), "the server in the test's process did not stop in 20 s"

    def restore(self) -> None:
        gc.unfreeze()  # what the app froze at its start (`gc.freeze`) may go with the next collection
        os.environ.clear()
        os.environ.update(self.saved)
        InThread.running = None


def launch_in_thread(port_socket: socket.socket, server: Server, env: dict[str, str]) -> Server:
    """``server`` served from this process on ``port_socket`` (bound, not yet listening), once it answers HTTP."""
    server.in_thread = InThread(env, port_socket)
    deadline = time.monotonic() + 20
    while not server.in_thread.server.started:
        if not server.in_thread.thread.is_alive() or time.monotonic() > deadline:
            server.in_thread.stop()
            raise RuntimeError("the server in the test's process did not start")
        time.sleep(0.005)
    return server


def needs_a_process(env: dict[str, str]) -> bool:
    """Whether a server must be its own process: one already runs in this one (the environment is shared), it
    listens on a unix socket, or its agents run in a sandbox (what the process may reach is the subject)."""
    sandboxed = env.get("WEBCLIENT_SANDBOX", "none").strip().lower() not in ("", "none")
    return InThread.running is not None or bool(env.get("WEBCLIENT_UDS")) or sandboxed


def stop_server(server: Server) -> None:
    """SIGTERM the server (SIGKILL after 10 s), or stop the one in this process as SIGTERM would, and close what the
    test held of it."""
    for client in server.clients:
        client.close()
    if server.in_thread is not None:
        server.in_thread.stop()
    else:
        assert server.process is not None
        server.process.terminate()
        try:
            server.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()
        if server.process.stdout:
            server.process.stdout.close()
    problems = journal_problems(server.store_dir) if server.store_dir is not None else []
    if server.data_dir is not None:
        shutil.rmtree(server.data_dir, ignore_errors=True)
    assert not problems, "the client sent what the ACP schema does not allow:\n" + "\n".join(problems)
