"""Whether the agent is signed in, and as whom: ``auth/status`` and its notifications, read for display.

* ACP (unstable, v1 and v2): an agent that advertises ``agentCapabilities.auth.status`` (``{}``) answers the request
  ``auth/status`` with ``{state, accounts?}`` and may send ``auth/status_update`` with the same fields whenever it
  changes. ``state`` is ``authenticated``, ``unauthenticated``, ``not_required`` or ``unknown`` (anything else counts
  as unknown); ``accounts`` are ``{label, active?, name?, email?, organization?}``, for display only.
* claude-agent-acp (0.101): advertises ``agentCapabilities._meta.authStatus`` and pushes ``_auth/status_update``
  ``{authStatus: {kind, label, detail?, account?: {email?, organization?, plan?}}}``; it is never asked. ``kind``
  ``none`` is "not logged in"; silence is "cannot tell".

Everything here is the agent's text: the templates escape it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, cast

from webclient.acp import wire
from webclient.acp.jsonrpc import ConnectionClosed, RpcError
from webclient.acp.peer import Peer
from webclient.acp.wire_values import items, mapping, text
from webclient.session.agent_auth import Account, AuthStatus

__all__ = ["NOTIFICATIONS", "STATUS_REQUEST", "advertised", "ask", "from_claude", "from_status", "read"]

STATUS_REQUEST = "auth/status"
NOTIFICATIONS = ("auth/status_update", "_auth/status_update")
_STATES = frozenset({"authenticated", "unauthenticated", "not_required", "unknown"})
ASK_SECONDS = 5.0
"""How long ``auth/status`` may take after ``initialize`` before the start goes on without it."""
_TEXT_LIMIT = 200
_ACCOUNTS_LIMIT = 10


def advertised(capabilities: dict[str, Any]) -> bool:
    """Whether the agent answers ``auth/status`` (``agentCapabilities.auth.status`` present, ``{}`` or more)."""
    auth = capabilities.get("auth")
    return isinstance(auth, dict) and isinstance(auth.get("status"), dict)


async def ask(peer: Peer) -> Any:
    """``auth/status``'s answer, or None when the agent refused, went or took longer than `ASK_SECONDS` (display
    only: it never holds up a start; an agent gone fails the next step)."""
    with contextlib.suppress(RpcError, ConnectionClosed, TimeoutError):
        async with asyncio.timeout(ASK_SECONDS):
            return await peer.request(STATUS_REQUEST, {})
    return None


def read(said: Any) -> AuthStatus | None:
    """Either form (ACP's has a ``state``, claude-agent-acp's an ``authStatus``); None when it is neither."""
    if isinstance(said, dict) and "state" in said:
        return from_status(said)
    return from_claude(said)


def from_status(raw: Any) -> AuthStatus | None:
    """The ``auth/status`` answer or an ``auth/status_update``; None when it is not an object."""
    if not isinstance(raw, dict):
        return None
    said = cast(wire.AuthStatusResponse, raw)  # an auth/status_update's params have the same keys
    state = said.get("state")
    accounts = []
    for item in items(said.get("accounts")):
        account = cast(wire.AuthAccount, mapping(item))
        label = text(account.get("label"), _TEXT_LIMIT, strip=True)
        if label is None:
            continue
        detail = " · ".join(
            found
            for found in (text(account.get(key), _TEXT_LIMIT, strip=True) for key in ("name", "email", "organization"))
            if found
        )
        accounts.append(Account(label=label, detail=detail or None, active=account.get("active") is True))
    return AuthStatus(
        state=state if isinstance(state, str) and state in _STATES else "unknown",
        accounts=tuple(accounts[:_ACCOUNTS_LIMIT]),
    )


def from_claude(raw: Any) -> AuthStatus | None:
    """claude-agent-acp's ``_auth/status_update`` params; None when they hold no ``authStatus``."""
    status = raw.get("authStatus") if isinstance(raw, dict) else None
    if not isinstance(status, dict) or not isinstance(status.get("kind"), str):
        return None
    if status["kind"] == "none":
        return AuthStatus(state="unauthenticated")
    account = mapping(status.get("account"))
    detail = text(status.get("detail"), _TEXT_LIMIT, strip=True) or " · ".join(
        found
        for found in (text(account.get(key), _TEXT_LIMIT, strip=True) for key in ("email", "organization"))
        if found
    )
    label = text(status.get("label"), _TEXT_LIMIT, strip=True) or status["kind"]
    return AuthStatus(state="authenticated", accounts=(Account(label=label, detail=detail or None, active=True),))
