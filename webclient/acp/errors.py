"""The agent's answers as the session's own outcomes: a JSON-RPC error is `AgentRefused`, a closed connection
`AgentGone` (the adapter's requests never leak `RpcError` or `ConnectionClosed`)."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import NoReturn, TypeVar

from webclient.acp.jsonrpc import ConnectionClosed, RpcError
from webclient.session.agent import AgentGone, AgentRefused

T = TypeVar("T")


async def answer(request: Awaitable[T]) -> T:
    """The agent's answer to a request, its error as the session's own."""
    try:
        return await request
    except RpcError as error:
        raise AgentRefused(error.text, error.code) from None
    except ConnectionClosed:
        raise AgentGone from None


def gone() -> NoReturn:
    """The agent went away before it answered."""
    raise AgentGone
