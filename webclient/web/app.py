"""The web layer's application: the routes of :data:`webclient.render.urls.ROUTES`, the access guard, the lifespan."""

from __future__ import annotations

import asyncio
import gc
import hmac
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, cast

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute

from webclient.acp.agent import AcpAgent
from webclient.agents.catalogue import Catalogue, UnknownAgent
from webclient.agents.checkpoint_stores import forget_stores
from webclient.agents.homes import data_folder
from webclient.agents.manager import SessionManager, malloc_trim
from webclient.agents.sandboxing import check_sandbox as check_sandbox  # for the command line: checked before start
from webclient.agents.session_worktrees import RetiredWorktrees
from webclient.agents.start_checks import check_commands, start_warnings
from webclient.config import Settings
from webclient.render.rendering import Renderer
from webclient.render.urls import ROUTES
from webclient.session.agent import AgentDriver, AgentHost
from webclient.web import readiness
from webclient.web.access.access import Access
from webclient.web.access.body_limits import BodyLimits, body_limits
from webclient.web.access.cookies import CookiePolicy, frames_other_sites
from webclient.web.access.guard import AccessGuard
from webclient.web.access.instance_proof import instance_token
from webclient.web.access.root_path import RootPath
from webclient.web.access.security_headers import SecurityHeaders
from webclient.web.access.trusted_header import TrustedHeader
from webclient.web.cluster.forwarding import Forwarding
from webclient.web.cluster.peers import ClusterHolder
from webclient.web.delivery.assets import StaticAssets
from webclient.web.delivery.compression import Compression
from webclient.web.demo_remote import DemoRemote
from webclient.web.live.agent_auth_socket import agent_auth_socket
from webclient.web.live.page_holds import PageStamps
from webclient.web.live.session_docs import SessionDocs
from webclient.web.live.session_socket import session_socket
from webclient.web.pages import (
    agent_sessions,
    audit_pages,
    checkpoints,
    embed,
    history,
    log_page,
    mcp_page,
    panels,
    people_page,
    prompt_box,
    raw_parts,
    secrets_page,
    sessions,
    shares,
    worktree_page,
)
from webclient.web.pages.inbox import inbox_answer, inbox_page
from webclient.web.pages.rules_page import always_allow, delete_rule, load_rules, rules_settings
from webclient.workspace import process_group
from webclient.workspace.reaper import STOP_SECONDS, Reaper

if TYPE_CHECKING:  # SQLAlchemy and cryptography only when the server keeps a store
    from sqlalchemy.ext.asyncio import AsyncEngine

    from webclient.store.mcp_servers import PersonMcpServers
    from webclient.store.secrets import Secrets
    from webclient.store.store import Store
    from webclient.web.cluster.instance import ClusterInstance

STATIC_DIR = Path(__file__).resolve().parents[2] / "static"

Endpoint = Callable[[Request], Awaitable[Response]]

PAGES: dict[str, tuple[Endpoint, str]] = {
    "index": (sessions.index, "GET"),
    "new_session": (sessions.create_session, "POST"),
    "agent_sessions": (agent_sessions.agent_sessions_page, "GET,POST"),
    "rules": (rules_settings, "GET,POST"),
    "delete_rule": (delete_rule, "POST"),
    "inbox": (inbox_page, "GET,POST"),
    "inbox_answer": (inbox_answer, "POST"),
    "always_allow": (always_allow, "POST"),
    "session": (sessions.session_page, "GET"),
    "prompt": (prompt_box.prompt_without_script, "POST"),
    "end_session": (sessions.end_session, "POST"),
    "archive_session": (history.archive_session, "POST"),
    "confirm_delete": (history.confirm_delete, "GET"),
    "delete_session": (history.delete_session, "POST"),
    "export": (sessions.export_session, "GET"),
    "protocol_log": (log_page.protocol_log_page, "GET"),
    "file": (panels.file_page, "GET"),
    "changes": (panels.changes_page, "GET"),
    "attachments": (prompt_box.upload_attachment, "POST"),
    "mentions": (prompt_box.mention_options, "GET"),
    "change_diff": (panels.change_diff_page, "GET"),
    "worktree": (worktree_page.worktree_view, "GET"),
    "worktree_commit": (worktree_page.commit, "POST"),
    "worktree_discard": (worktree_page.discard, "POST"),
    "diff_body": (panels.diff_body, "GET"),
    "resource": (panels.resource_page, "GET"),
    "tool_call_raw": (raw_parts.tool_call_raw, "GET"),
    "checkpoint": (checkpoints.checkpoint_preview, "GET"),
    "sign_out": (people_page.sign_out, "POST"),
    "people": (people_page.people_page, "GET"),
    "revoke_signin": (people_page.revoke_signin, "POST"),
    "secrets": (secrets_page.secrets_page, "GET"),
    "save_secret": (secrets_page.save_secret, "POST"),
    "delete_secret": (secrets_page.delete_secret, "POST"),
    "mcp_servers": (mcp_page.mcp_page, "GET"),
    "save_mcp_server": (mcp_page.save_mcp_server, "POST"),
    "delete_mcp_server": (mcp_page.delete_mcp_server, "POST"),
    "session_audit": (audit_pages.session_audit, "GET"),
    "add_share": (shares.add_share, "POST"),
    "revoke_share": (shares.revoke_share, "POST"),
    "audit": (audit_pages.server_audit, "GET"),
    "embed": (embed.embed, "GET,POST"),
    "embed_session": (embed.embed_session, "GET"),
    "embed_end": (embed.embed_end, "POST"),
    "healthz": (readiness.healthz, "GET"),
    "readyz": (readiness.readyz, "GET"),
}
"""The HTTP routes by name (their paths are in :data:`~webclient.render.urls.ROUTES`): what answers, to which method."""


def agent_driver(host: AgentHost) -> AgentDriver:
    """The adapter of a new session's agent: AAP for a remote agent (its spec has a URL), ACP otherwise."""
    if host.spec.entry.url:
        from webclient.aap.agent import AapAgent  # here: the AAP adapter and httpx (4 MiB) only for a remote agent

        return AapAgent(host)
    return AcpAgent(host)


def routes(assets: StaticAssets | None = None) -> list[BaseRoute]:
    """Every route of :data:`~webclient.render.urls.ROUTES`, named as there; ``static`` answers from ``assets`` (by
    default the files of ``static/``, read now)."""
    assets = assets or StaticAssets(STATIC_DIR)
    table: list[BaseRoute] = []
    for name, path in ROUTES.items():
        if name == "socket":
            table.append(WebSocketRoute(path, session_socket, name=name))
        elif name == "sign_in_terminal":
            table.append(WebSocketRoute(path, agent_auth_socket, name=name))
        elif name == "static":
            table.append(Mount(path, app=assets, name=name))
        else:
            endpoint, method = PAGES[name]
            table.append(Route(path, endpoint, methods=method.split(","), name=name))
    return table


def check_catalogue(settings: Settings) -> list[str]:
    """Read the agents' config and registry files once before the server starts, so that a mistake stops the start.

    Raises:
        CatalogueError: naming the file, the agent and the field; an agent whose folders hold the data folder; or
            one whose command is not there.

    Returns:
        Lines to print about agents that may not work (`webclient.agents.start_checks.start_warnings`).
    """
    catalogue = Catalogue.from_settings(settings)
    catalogue.check_roots(settings)
    check_commands(catalogue.entries.values(), os.environ.get("PATH", ""), settings.config)
    return start_warnings(catalogue.entries.values())


def check_store(settings: Settings) -> None:
    """Open the store once before the server starts, checked and migrated, so that one that cannot be used stops the
    start with a line saying why (rather than a traceback from the lifespan).

    Raises:
        StoreError: naming the store, what went wrong and what to do.
    """
    if settings.store:
        from webclient.store import database  # here: SQLAlchemy takes 0.2 s to import, for nothing without a store

        asyncio.run(database.check(database.database_url(settings)))


async def people_secrets(settings: Settings, store: Store | None) -> Secrets | None:
    """Where people's secrets are kept (with the store), their key read or made (a file) now: None without a store."""
    if store is None:
        return None
    from webclient.store.secrets import Secrets, server_key

    key = await asyncio.to_thread(server_key, settings.secret_key, data_folder(settings))
    return Secrets(store.engine, key)


def person_mcp_servers(store: Store | None, kept: Secrets | None) -> PersonMcpServers | None:
    """Where people's own MCP servers are kept (with the store), encrypted with the secrets' key."""
    if store is None or kept is None:
        return None
    from webclient.store.mcp_servers import PersonMcpServers

    return PersonMcpServers(store.engine, kept.key)


async def trimmed_after(warming: asyncio.Task[None]) -> None:
    """Once the templates are compiled, hand what start-up freed back to the OS: glibc keeps it otherwise, most of it
    in the arena of the thread that compiled them (3.7 MiB of an idle server, bench/idle_memory.py)."""
    await asyncio.gather(warming, return_exceptions=True)
    await asyncio.to_thread(malloc_trim)


def released(app: Starlette, session_id: str) -> None:
    """The registry let go of a session: so do its rendered Markdown and its pages' records."""
    app.state.docs.release(session_id)
    app.state.page_stamps.release(session_id)


def several_instances(settings: Settings) -> bool:
    """Whether this instance may be one of several: its store is PostgreSQL (SQLite is one instance's)."""
    return settings.store and (settings.database_url or "").startswith(("postgresql", "postgres:"))


def instance_address(settings: Settings) -> str | None:
    """Where the other instances reach this one: ``WEBCLIENT_INSTANCE_URL``, else the address and port it listens on
    (its host name when it listens on every address); None on a unix socket only."""
    if settings.instance_url:
        return settings.instance_url
    if settings.proxy_proof.uds is not None:
        return None
    host = settings.host.strip("[]")
    if host in ("0.0.0.0", "::", ""):
        host = socket.gethostname()
    return f"http://[{host}]:{settings.port}" if ":" in host else f"http://{host}:{settings.port}"


def agent_labels(manager: SessionManager, agent: str | None) -> tuple[str, ...]:
    """What an instance must offer to run a new session of ``agent`` (the catalogue's; an unknown agent: nothing)."""
    try:
        return manager.catalogue.get(agent).instance_labels
    except UnknownAgent:
        return ()


async def start_cluster(app: Starlette, settings: Settings, store: Store) -> ClusterInstance:
    """Take this instance's place among the others on the store: leases for the sessions it makes or is asked for."""
    from webclient.web.cluster.instance import ClusterInstance

    manager: SessionManager = app.state.sessions
    engine = cast("AsyncEngine", store.engine)  # PostgreSQL's (`several_instances`)
    instance = ClusterInstance(engine, store.writer, manager, instance_address(settings), settings.instance_labels)
    instance.labels_of = lambda agent: agent_labels(manager, agent)
    instance.ask_address = app.state.cluster_holder.who_answers
    await instance.start()
    manager.on_created = instance.claim_new
    manager.on_forget = instance.forgotten
    manager.elsewhere = instance.owned_elsewhere

    async def moved(session_id: str) -> None:
        found = getattr(app.state, "presence", None)  # made with the first page (`web.live.presence`)
        if found is not None:
            await found.moved(session_id)

    instance.on_moved = moved
    app.state.cluster_holder.instance = instance
    return instance


def create_app(settings: Settings | None = None) -> Starlette:
    """The ASGI application (``uvicorn --factory webclient.web.app:create_app``)."""
    settings = settings or Settings.from_env()
    person_headers = (settings.trusted_header, settings.trusted_email_header, settings.trusted_groups_header)
    holder = ClusterHolder([h for h in person_headers if h])
    if several_instances(settings):
        from webclient.store.secrets import server_key

        key = server_key(settings.secret_key, data_folder(settings))
        holder.token = instance_token(key)
        access = Access.from_settings(settings, shared_secret=hmac.new(key, b"webclient pages", "sha256").digest())
    else:
        access = Access.from_settings(settings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.settings = settings
        app.state.renderer = Renderer()
        # In a worker thread: the server answers meanwhile (a template asked for first is compiled on demand).
        warming = asyncio.create_task(asyncio.to_thread(app.state.renderer.warm), name="compile templates")
        app.state.docs = SessionDocs()
        app.state.page_stamps = PageStamps()  # what each page rendered holds, until its socket connects
        store = retention = None
        if settings.store:
            from webclient.store.retention import Retention  # here, as in check_store
            from webclient.store.store import Store
            from webclient.web.access.signins import SignIns

            store = await Store.open(settings)  # checked, migrated to the newest tables
            retention = Retention.start(store.engine, store.writer, settings)
            retired, forget = RetiredWorktrees(settings, store.journal_start), forget_stores(settings)
            retention.deleting = retired.deleting  # where their worktrees are, read before their journal goes

            def deleted(session_ids: Sequence[str]) -> None:  # their checkpoints and clean worktrees go with them
                forget(session_ids)
                retired.deleted(session_ids)

            retention.deleted = deleted
            # Signed-in sessions live in the store; without one (token mode only) the cookie is derived from the token.
            key = access.signin_key
            app.state.signins = SignIns(store.engine, settings.signin_days, key)
            if key is not None:
                await app.state.signins.for_token()
            if access.oidc is not None:  # sign-ins under way too: the provider may send the browser to another instance
                from webclient.web.access.started_signins import InStore

                access.oidc.started = InStore(store.engine)
        else:
            app.state.signins = None
        app.state.store = store
        app.state.secrets = await people_secrets(settings, store)
        Reaper.for_this_process()  # stops our subprocesses should this process die without stopping them
        demo_remote = await DemoRemote.start() if settings.demo_remote else None
        app.state.rules = await load_rules(store)  # everyone's permission rules, in memory (`people.rules.RuleBook`)
        app.state.sessions = SessionManager(
            settings,
            agent_driver,
            on_release=lambda session_id: released(app, session_id),
            records=store,
            demo_remote=demo_remote.url if demo_remote is not None else None,
            rules=app.state.rules,
            folders=store,
        )
        if app.state.secrets is not None:  # a stored session rebuilt starts its agent with its owner's secrets
            app.state.sessions.owner_env = app.state.secrets.env
            app.state.sessions.keep_secret = app.state.secrets.put  # a key given on a sign-in screen
        app.state.mcp_servers = person_mcp_servers(store, app.state.secrets)
        if app.state.mcp_servers is not None:  # a stored session rebuilt is given its owner's MCP servers again
            app.state.sessions.person_mcp = app.state.mcp_servers.servers
        # Start-up's objects (modules, classes) live as long as the process: keep them out of every garbage
        # collection, so a full one costs what the sessions hold, not the whole server. A full collection walks
        # all of that (about 90 ms for a 10,000-entry thread on a 2-core machine), and an agent's flood made one
        # every second by default: the other sessions' p99 round trip was 430 ms, with one per 100 middle
        # collections instead 206 ms (bench/isolation.py). Forgotten sessions are collected explicitly.
        gc.freeze()
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, 100)
        trimmed = asyncio.create_task(trimmed_after(warming), name="give back what start-up freed")
        cluster = await start_cluster(app, settings, store) if store is not None and holder.token else None
        app.state.cluster = cluster
        app.state.readiness.state = "ready"
        try:
            yield
        finally:
            await asyncio.gather(warming, trimmed, return_exceptions=True)
            await process_group.stop_within(STOP_SECONDS, app.state.sessions.close_all())
            if cluster is not None:
                await cluster.close()  # its leases go once its agents are stopped
            await holder.close()
            if demo_remote is not None:
                await demo_remote.close()
            if retention is not None:
                await retention.close()
            if store is not None:
                await store.close()  # writes what the sessions recorded to the end

    assets = StaticAssets(STATIC_DIR)  # read and hashed once: every page names them by their hashed URLs
    table = routes(assets)
    app = Starlette(routes=table, lifespan=lifespan)
    app.state.access = access
    app.state.assets = assets
    app.state.readiness = readiness.Readiness()  # starting, until the lifespan has started
    # Outermost last: the headers go on the guard's own refusals too.
    app.add_middleware(AccessGuard, access=access)
    # Outside the guard: the body it reads for a form's csrf field is counted too.
    app.add_middleware(BodyLimits, routes=table, limits=body_limits(settings))
    app.add_middleware(SecurityHeaders, frame_ancestors=settings.frame_ancestors)
    # Outside the guard and the routes: their answers, refusals and sign-in page included, go compressed (pages
    # carry their token masked: BREACH, see webclient.web.delivery.compression); web sockets pass by.
    app.add_middleware(Compression)
    # Just inside RootPath: a request for a session another instance runs goes there, as the browser sent it.
    app.add_middleware(Forwarding, cluster=holder)
    # Outermost of all: the guard and the routes see the path prefix and the scheme the browser used.
    proxies = TrustedHeader.from_settings(settings)
    app.add_middleware(RootPath, root=settings.root_path, proxies=proxies, instances=holder.token)
    app.state.cluster_holder = holder
    app.state.cookies = CookiePolicy(framed=frames_other_sites(settings.frame_ancestors))
    return app
