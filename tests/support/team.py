"""A session's page socket as one person of a team (trusted-header mode): what the sharing tests drive."""

from __future__ import annotations

import contextlib
import html
import json
import re
import weakref
from collections.abc import AsyncIterator, Iterable

import httpx
import websockets
from websockets.asyncio.client import ClientConnection

from tests.support.people import as_person
from tests.support.restarts import until
from tests.support.servers import Server
from tests.support.urls import URLS, socket_at


def new_session(server: Server, name: str, groups: Iterable[str] = ()) -> str:
    """A new session of ``name``'s (started with the server's agent); its id."""
    headers = {**as_person(name, groups), "Origin": server.url}
    with httpx.Client(base_url=server.url, headers=headers) as http:
        response = http.post(URLS.for_("new_session"))
    assert response.status_code == 303, response.text[:300]
    return str(response.headers["location"]).rsplit("/", 1)[1]


@contextlib.asynccontextmanager
async def page_socket(
    server: Server, session_id: str, name: str, groups: Iterable[str] = (), query: str = ""
) -> AsyncIterator[tuple[ClientConnection, str]]:
    """The page socket of ``session_id`` as ``name``, once its first frame came: the socket and the prompt nonce
    (empty when the page has no composer)."""
    url = socket_at(server.url, session_id) + query
    headers = {**as_person(name, groups), "Origin": server.url}
    async with websockets.connect(url, additional_headers=headers, max_size=None) as socket:
        first = str(await socket.recv())
        _first_frames[socket] = first
        nonce = re.search(r'id="prompt-nonce" value="([^"]+)"', first)
        yield socket, nonce.group(1) if nonce else ""


_first_frames: weakref.WeakKeyDictionary[ClientConnection, str] = weakref.WeakKeyDictionary()
"""The whole page each socket began with (`ready` looks there first)."""


async def ready(socket: ClientConnection) -> None:
    """Once the session's agent is ready (it may have been when the page opened)."""
    if 'data-agent-state="ready"' not in _first_frames.get(socket, ""):
        await until(socket, 'data-agent-state="ready"')


async def prompt(socket: ClientConnection, text: str, nonce: str) -> None:
    await socket.send(json.dumps({"action": "prompt", "prompt": text, "nonce": nonce}))


async def asked(socket: ClientConnection) -> tuple[str, str]:
    """The first option and the request id of the permission question the page shows next."""
    frame = await until(socket, 'data-state="pending"')
    found = re.search(r'"option_id": "([^"]+)", "request_id": "([^"]+)"', html.unescape(frame))
    assert found is not None
    return found.group(1), found.group(2)
