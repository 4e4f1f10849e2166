"""The Share panel of a session: its owner shares it with a person, a group or by link, to watch or to drive, and
revokes; and the share link's token a request comes with.

A session's agent runs as its owner (their secrets, their home with the agents' logins): whoever drives it can have
the agent read them. The panel says so, and a drive link (anyone who has it drives) needs the owner's confirmation
(`OWNER_KEYS`), checked here.

A link share's URL is ``/sessions/{id}?share=TOKEN``: the page answering it sets a cookie ``share`` scoped to that
session's path, so the page's own requests (its socket, its panels) carry the token after it
(`webclient.web.context.link_token` reads either). A share or a revoke
is in `Session.shares` at once, so the next request and the next message of an open socket see it; a revoke also
closes the sockets of those it shut out (`webclient.web.live.presence`).
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import RedirectResponse, Response

from webclient.people.person import LOCAL
from webclient.people.roles import Share
from webclient.render.dom import PAGE_IDS
from webclient.session.core import Session
from webclient.web.access import cookies
from webclient.web.access.browser_origin import site
from webclient.web.context import SHARE_PARAM, person, session_of, urls
from webclient.web.live.presence import page_context, presence

if TYPE_CHECKING:  # the store only with one: SQLAlchemy is slow to import
    from webclient.store.shares import StoredShare
    from webclient.store.store import Store

KINDS = ("person", "group", "link")
ROLES = ("watch", "drive")
MAX_GRANTEE = 200
OWNER_KEYS = "owner_keys"
"""The Share form's checkbox (``yes``): the owner knows that a driver runs the agent with the owner's secrets and
agent logins. A drive link is made only with it: whoever has the link, anyone it was passed on to, could read them."""
DRIVE_LINK_REFUSED = (
    "Not shared: whoever has a drive link runs this session's agent with your secrets (your API keys) and your "
    "agents' logins, and could have the agent print them. Tick “They use my keys and logins” to make one anyway."
)


def remember_link(conn: HTTPConnection, response: Response, session: Session) -> None:
    """The page came through a share link (``?share=``): keep its token in a cookie for that session's pages."""
    token = conn.query_params.get(SHARE_PARAM)
    if token and any(s.kind == "link" and s.grantee == token for s in session.shares):
        path = urls(conn).for_("session", session_id=session.id)
        cookies.policy(conn.scope).set(conn.scope, response, SHARE_PARAM, token, path, None)


async def panel_context(conn: HTTPConnection, session: Session) -> dict[str, Any]:
    """`page_context`, and for the owner what the Share panel lists: the shares, and the people to pick from."""
    context = page_context(conn, session)
    owner = context["role"] == "owner" and person(conn).id != LOCAL.id  # token mode's one person shares with no one
    context["may_share"] = owner
    context["shares_listed"] = await listed(conn, session) if owner else []
    context["known_people"] = await known_people(conn) if owner else []
    context["site"] = site(conn.scope)  # a share link to copy is a whole URL
    return context


async def owned(request: Request) -> tuple[Session, Store]:
    """The session the URL names, which this request's person owns (the owner, or an admin), and the store."""
    session = await session_of(request, "owner")
    store: Store | None = getattr(request.app.state, "store", None)
    if store is None:
        raise HTTPException(404, "The store is off: sessions are not kept, nor shared")
    return session, store


async def add_share(request: Request) -> Response:
    """The Share panel's form: ``kind`` (person, group, link), ``grantee`` (not for a link) and ``role``."""
    from webclient.store import audit  # here: SQLAlchemy is imported only when a store is used
    from webclient.store import shares as stored_shares

    session, store = await owned(request)
    form = await request.form()
    kind, grantee, share_role = (str(form.get(name, "")).strip() for name in ("kind", "grantee", "role"))
    if kind == "link":
        grantee = secrets.token_urlsafe(18)
    elif kind == "person" and grantee:
        grantee = await stored_shares.person_named(store.engine, grantee[:MAX_GRANTEE])
    if kind not in KINDS or share_role not in ROLES or not grantee or len(grantee) > MAX_GRANTEE:
        return _back(request, session)  # nothing to share (the form was sent empty): the panel shows what there is
    if kind == "link" and share_role == "drive" and form.get(OWNER_KEYS) != "yes":
        raise HTTPException(400, DRIVE_LINK_REFUSED)
    share = Share(kind, grantee, share_role)  # type: ignore[arg-type]  # checked against KINDS and ROLES above
    await store.flush()  # the session's row, which the share names
    by = person(request)
    await stored_shares.add(store.engine, session.id, share, by.id)
    await _reload(session, store)
    detail = {"kind": kind, "grantee": _shown(share), "role": share_role}
    store.add_audit(audit.row(session.id, by.id, by.label, "share", detail))
    await presence(request).shut_out(session)  # sharing again may turn a driver into a watcher
    return _back(request, session)


async def revoke_share(request: Request) -> Response:
    from webclient.store import audit  # here: SQLAlchemy is imported only when a store is used
    from webclient.store import shares as stored_shares

    session, store = await owned(request)
    revoked = await stored_shares.revoke(store.engine, session.id, request.path_params["share_id"])
    if revoked is not None:
        await _reload(session, store)
        by = person(request)
        detail = {"kind": revoked.kind, "grantee": _shown(revoked), "role": revoked.role}
        store.add_audit(audit.row(session.id, by.id, by.label, "revoke", detail))
        await presence(request).shut_out(session)
    return _back(request, session)


async def listed(conn: HTTPConnection, session: Session) -> list[StoredShare]:
    """The session's shares as its owner's panel lists them (none without a store)."""
    from webclient.store import shares as stored_shares  # here: SQLAlchemy is imported only when a store is used

    store: Store | None = getattr(conn.app.state, "store", None)
    return [] if store is None else await stored_shares.of_session(store.engine, session.id)


async def known_people(conn: HTTPConnection) -> list[tuple[str, str]]:
    """(id, name) of the people the server knows, for the panel's list to pick from."""
    from webclient.store import shares as stored_shares  # here: SQLAlchemy is imported only when a store is used

    store: Store | None = getattr(conn.app.state, "store", None)
    return [] if store is None else await stored_shares.known_people(store.engine)


async def _reload(session: Session, store: Store) -> None:
    from webclient.store import shares as stored_shares  # here: SQLAlchemy is imported only when a store is used

    session.shares = [stored.share for stored in await stored_shares.of_session(store.engine, session.id)]


def _shown(share: Share) -> str:
    """A share's grantee as the audit log keeps it: a link's token is a secret, only its start is kept."""
    return share.grantee[:6] + "…" if share.kind == "link" else share.grantee


def _back(request: Request, session: Session) -> Response:
    return RedirectResponse(
        urls(request).for_("session", session_id=session.id) + f"#{PAGE_IDS.share}", status_code=303
    )
