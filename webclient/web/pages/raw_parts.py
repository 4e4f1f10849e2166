"""A tool call's raw JSON (its input, its output, everything the agent sent about it), fetched when someone opens it.

The card in the page holds only the ``<details>`` that ask for it: raw JSON is agent data of any size, and an update
that re-sent it with every new line of output cost more than the rest of the card.
"""

from __future__ import annotations

from typing import Any

from markupsafe import escape
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from webclient.render.formats import pretty_json
from webclient.viewmodel.entries import ToolCall
from webclient.web.context import session_of

PARTS = ("input", "output", "payload")
"""What ``?part=`` may name: ``rawInput``, ``rawOutput``, or the whole tool call as the agent described it."""


async def tool_call_raw(request: Request) -> Response:
    """One part of a tool call's raw JSON as escaped text, for the ``<pre>`` of the ``<details>`` that asked.

    Raises:
        HTTPException: 404 when the session is not the person's to see, or has no such card or part; 400 for a part
            that is none of :data:`PARTS`.
    """
    session = await session_of(request)
    part = request.query_params.get("part", "")
    if part not in PARTS:
        raise HTTPException(400, f"part must be one of {', '.join(PARTS)}")
    call = session.thread.get(request.path_params["seq"])
    if not isinstance(call, ToolCall):
        raise HTTPException(404, "No such tool call")
    value: Any = {"input": call.raw_input, "output": call.raw_output, "payload": call.raw}[part]
    if value is None:
        raise HTTPException(404, f"This tool call has no raw {part}")
    # Escaped as text, as autoescape would: the agent's JSON never becomes markup.
    return HTMLResponse(str(escape(pretty_json(value))), headers={"Cache-Control": "no-store"})
