"""The Share panel of a session: its owner shares it with a person, a group or by link, to watch or to drive, and
revokes; and the share link's token a request comes with.

A link share's URL is ``/sessions/{id}?share=TOKEN``: the first request sets a cookie ``share`` scoped to that
session's path, so the page's own requests (its socket, its panels) carry the token after it.
"""

from __future__ import annotations

from starlette.requests import HTTPConnection

SHARE = "share"
"""The name of the share link's token: a query parameter, and the cookie it becomes."""


def share_token(conn: HTTPConnection) -> str | None:
    """The share link's token this request came with (its query, else the cookie the link left), if any."""
    token = conn.query_params.get(SHARE) or conn.cookies.get(SHARE)
    return token[:100] if token else None
