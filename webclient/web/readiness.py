"""Whether this instance answers and whether it takes new sessions: the probes ``/healthz`` and ``/readyz``, and the
drain a ``SIGTERM`` begins (``WEBCLIENT_DRAIN_SECONDS``, `webclient.cli`).

``/healthz``: the process is alive and its event loop answers (200 ``ok``; it asks nothing of the store). ``/readyz``:
200 ``ok`` while the instance takes new sessions and its store (if it keeps one) answers, else 503 with one word:
``starting``, ``draining`` or ``store``. Both answer to anyone who may reach the server (the access guard lets them
through, as it does static files): they say nothing more than that, and a store check is made once however many
probes ask at the same time, within `STORE_SECONDS`.

Draining (`drain`): from its first moment no new session starts here (`SessionManager.refusing`: New session, an
embed's start and Resume say the server is restarting, 503) and ``/readyz`` fails, so a load balancer sends new
people elsewhere; pages and sockets keep working and say the server is restarting (each session whose agent runs
says so in its thread), and the turns under way run to their end, up to the deadline. Then the server stops as it
always did (agents stopped, journal written, sessions kept as stopped for the next start to take up).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Literal

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from webclient.agents.limits import RUNNING

if TYPE_CHECKING:
    from webclient.agents.manager import SessionManager
    from webclient.store.store import Store

log = logging.getLogger(__name__)

State = Literal["starting", "ready", "draining"]

STORE_SECONDS = 2.0
"""How long ``/readyz`` waits for the store to answer before it says the store does not."""

CATCH_UP_SECONDS = 0.5
"""How long a drain that saw turns under way waits once they end, so that the open pages are sent each turn's last
frame (a page's socket sends at most every 50 ms, later under load) before the stop closes their sockets."""

RESTARTING = "The server is restarting: it starts no new session now. Try again in a minute."
"""What a refused start says while the server drains (the page, and Resume's notice)."""

NO_STORE = {"cache-control": "no-store"}


class Readiness:
    """This instance's state for ``/readyz``: starting until its lifespan has started, then ready, then draining."""

    def __init__(self) -> None:
        self.state: State = "starting"
        self._checking: asyncio.Future[bool] | None = None

    @property
    def draining(self) -> bool:
        return self.state == "draining"

    async def store_answers(self, store: Store) -> bool:
        """Whether the store answers a query within `STORE_SECONDS`: one query for every probe asking meanwhile."""
        if self._checking is None:
            self._checking = asyncio.ensure_future(_ask(store))
            self._checking.add_done_callback(lambda _: setattr(self, "_checking", None))
        return await asyncio.shield(self._checking)


async def _ask(store: Store) -> bool:
    from sqlalchemy import text  # here, as the store: only a server that keeps one asks it

    try:
        async with asyncio.timeout(STORE_SECONDS):
            async with store.engine.connect() as connection:
                await connection.execute(text("select 1"))
        return True
    except Exception as error:  # whatever the database or its driver raised: not ready, and why in the log
        log.warning("readyz: the store did not answer: %s", error)
        return False


async def healthz(request: Request) -> Response:
    """Alive: the event loop answered this request; one of several instances says which (it asks itself at its own
    address: `webclient.web.cluster.instance.ClusterInstance.identity`)."""
    cluster = getattr(request.app.state, "cluster", None)
    return PlainTextResponse("ok", headers={**NO_STORE, **cluster.identity} if cluster is not None else NO_STORE)


async def readyz(request: Request) -> Response:
    """Ready for new sessions (200 ``ok``), or not, with one word for why (503)."""
    readiness: Readiness = request.app.state.readiness
    if readiness.state != "ready":
        return PlainTextResponse(readiness.state, status_code=503, headers=NO_STORE)
    store: Store | None = getattr(request.app.state, "store", None)
    if store is not None and not await readiness.store_answers(store):
        return PlainTextResponse("store", status_code=503, headers=NO_STORE)
    return PlainTextResponse("ok", headers=NO_STORE)


def app_of(asgi: object) -> Starlette | None:
    """Our application inside what uvicorn loaded (its own middleware wraps it, each holding the next as ``app``)."""
    for _ in range(16):
        if isinstance(asgi, Starlette):
            return asgi
        asgi = getattr(asgi, "app", None)
    return None


def turns_under_way(sessions: SessionManager) -> int:
    """How many sessions have a turn running, an agent starting or a question waiting for its answer."""
    return sum(s.turns.turn_state in ("running", "awaiting-permission") for s in sessions.sessions.values())


async def drain(app: Starlette, seconds: float) -> None:
    """Stop taking new sessions now, then return once no turn is under way (and, if one was, the open pages have
    had `CATCH_UP_SECONDS` to be sent its end), or after ``seconds``."""
    app.state.readiness.state = "draining"
    sessions: SessionManager = app.state.sessions
    sessions.refusing = RESTARTING
    cluster = getattr(app.state, "cluster", None)  # one of several instances: idle sessions move to the others now
    then = "the session moves to another instance" if cluster is not None else "Resume it once this page is back"
    detail = f"A turn under way may finish, for up to {seconds:g} s; then the agent stops: {then}."
    running = [session for session in sessions.sessions.values() if session.lifecycle.agent_state in RUNNING]
    for session in running:  # its pages may be open: they say so, as its thread will
        session.shown.notice("warning", "The server is restarting", detail)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    log.warning("draining: no new sessions; %d turns under way, %g s to finish", turns_under_way(sessions), seconds)
    while (
        await cluster.hand_over_idle() if cluster is not None else turns_under_way(sessions)
    ) and loop.time() < deadline:
        await asyncio.sleep(0.25 if cluster is not None else 0.1)
    left = turns_under_way(sessions)
    if left:
        log.warning("drained: %d turns still under way are stopped (WEBCLIENT_DRAIN_SECONDS=%g)", left, seconds)
    elif running:
        await asyncio.sleep(CATCH_UP_SECONDS)
