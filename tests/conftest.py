"""Fixtures that start the real server, real agents and a real headless Chromium."""

from __future__ import annotations

import secrets
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.postgres import Cluster, running_cluster
from tests.support.servers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    SCRIPTED_AGENT,
    Server,
    ServerFactory,
    Tier,
    free_port,
    launch_server,
    stop_server,
)


def _one_tls_context() -> None:
    """Every ``httpx`` client a test makes would load certifi's bundle again, 75 ms of CPU each and thousands a run:
    the default context is made once and shared (an ``SSLContext`` is safe to share); any other is made as asked."""
    import httpx._transports.default as transports

    shared = httpx.create_ssl_context()
    made = transports.create_ssl_context

    def create_ssl_context(verify: Any = True, cert: Any = None, trust_env: bool = True) -> ssl.SSLContext:
        return shared if verify is True and cert is None and trust_env else made(verify, cert, trust_env)

    transports.create_ssl_context = create_ssl_context


_one_tls_context()

pytest_plugins = ["tests.support.live"]
"""The in-process app (`start_app`), for every test."""

BROWSER_TESTS = Path(__file__).parent / "browser"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test under tests/browser/ ``browser``, so that ``make test-fast`` can leave Chromium out."""
    for item in items:
        if item.path.is_relative_to(BROWSER_TESTS):
            item.add_marker(pytest.mark.browser)


TIERS_WITH_PROCESSES = ("process", "browser", "slow", "alone")
"""The markers of the tests ``make test`` runs and ``make test-fast`` does not: those may start a server process."""


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    Tier.process_allowed = any(item.get_closest_marker(marker) for marker in TIERS_WITH_PROCESSES)


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[ServerFactory]:
    """Start ``python -m webclient`` on a free port; ``agent=None`` runs the demo agent."""
    started: list[Server] = []

    def start(
        agent: str | None = SCRIPTED_AGENT,
        workspace: Path | None = None,
        *,
        process: bool = False,
        port: int | None = None,
        **env: str,
    ) -> Server:
        """``workspace``: the agent's folder (made if needed); by default one of its own per server. ``process``: its
        own process, where the process is the subject (signals, its output, what outlives it); else it is served from
        the test's process when it can be (`tests.support.servers.InThread`). ``port``: where it listens (an instance
        restarted where it was; or WEBCLIENT_PORT among ``env``); by default a free one."""
        port = port or int(env.pop("WEBCLIENT_PORT", 0)) or free_port()
        workspace = workspace or tmp_path / f"workspace-{port}"
        options = []
        if agent is not None:
            workspace.mkdir(exist_ok=True)
            options = ["--agent", agent, "--workspace", str(workspace)]
        record = tmp_path / f"received-{port}.jsonl"
        env = {"DEMO_AGENT_SPEED": "0", **env}
        token = secrets.token_urlsafe(16)
        server = launch_server(port, token, record, workspace, options, env, subprocess.PIPE, in_thread=not process)
        started.append(server)
        return server

    yield start
    refused = []
    for server in started:  # every one stopped, even when one of them sent what the schema does not allow
        try:
            stop_server(server)
        except AssertionError as error:
            refused.append(str(error))
    assert not refused, "\n".join(refused)


@pytest.fixture(scope="session")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server per test process (each xdist worker) on the scripted agent, for tests that only read, or make
    sessions of their own and compare before with after: started the first time a test asks, stopped at the end.
    Its own process, so that a test beside it may still run one in the test's process (`start_server`)."""
    folder = tmp_path_factory.mktemp("shared")
    port = free_port()
    options = ["--agent", SCRIPTED_AGENT, "--workspace", str(folder)]
    record = folder / "received.jsonl"
    env = {"DEMO_AGENT_SPEED": "0"}
    allowed, Tier.process_allowed = Tier.process_allowed, True  # one per worker, for every test that reads it
    try:
        server = launch_server(port, secrets.token_urlsafe(16), record, folder, options, env, subprocess.PIPE)
    finally:
        Tier.process_allowed = allowed
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def postgresql() -> Iterator[Cluster]:
    """A throw-away PostgreSQL cluster per test process, started the first time a test asks (`tests.support.postgres`):
    ``new_database()`` gives each test a database of its own."""
    with running_cluster("webclient-pg-") as cluster:
        yield cluster


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium per test module: Playwright's sync API keeps an event loop running while it is open,
    which asyncio tests in other modules must not find."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make test`, which installs Debian's chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert not errors, f"JavaScript errors in the page: {errors}"
