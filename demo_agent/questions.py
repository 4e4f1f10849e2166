"""Questions the demo agent asks the user besides permissions (ACP elicitation): a form, and a link to follow.
https://agentclientprotocol.com/protocol/elicitation
"""

from __future__ import annotations

import json
from typing import Any

from .jsonrpc import RequestError
from .turn import Turn

PROJECT_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Project name", "description": "What it is called", "maxLength": 60},
        "language": {
            "type": "string",
            "title": "Language",
            "oneOf": [{"const": "python", "title": "Python"}, {"const": "typescript", "title": "TypeScript"}],
            "default": "python",
        },
        "coverage": {"type": "integer", "title": "Coverage aim (%)", "minimum": 0, "maximum": 100, "default": 80},
        "ci": {"type": "boolean", "title": "Set up CI", "default": True},
        "token": {"type": "string", "title": "Registry token", "description": "Not shown again", "format": "password"},
    },
    "required": ["name", "language"],
}


async def _ask(turn: Turn, params: dict[str, Any]) -> dict[str, Any] | None:
    try:
        result = await turn._request("elicitation/create", params)  # noqa: SLF001 - the turn's one way to ask the client
    except RequestError as error:
        await turn.say(f"The client refused the question ({error}).")
        return None
    return result if isinstance(result, dict) else {}


async def run_question(turn: Turn) -> None:
    """A form: the client renders it from its schema; the answer comes back typed."""
    if not turn.caps.form_questions:
        await turn.say("Your client does not take form questions (`elicitation.form`), so I cannot ask one.")
        return
    await turn.say("A few details before I set up the project:")
    answer = await _ask(turn, {"mode": "form", "message": "Set up a new project", "requestedSchema": PROJECT_FORM})
    if answer is None:
        return
    action, content = answer.get("action"), answer.get("content") or {}
    if action != "accept":
        await turn.say(f"\n\nYou chose **{action}**: I will not set anything up.")
        return
    shown = {key: ("(hidden)" if key == "token" else value) for key, value in content.items()}
    await turn.say(f"\n\nThank you. I got, typed as the schema says:\n\n```json\n{json.dumps(shown, indent=2)}\n```\n")


async def run_link(turn: Turn) -> None:
    """A link: the client shows it in full; opening it is the user's answer (accept); the agent says it is complete."""
    if not turn.caps.link_questions:
        await turn.say("Your client does not show links to follow (`elicitation.url`).")
        return
    params = {
        "mode": "url",
        "message": "Read the elicitation page of the protocol, then come back",
        "url": "https://agentclientprotocol.com/protocol/elicitation",
        "elicitationId": "demo-link-1",
    }
    answer = await _ask(turn, params)
    if answer is None:
        return
    await turn.conn.send_notification("elicitation/complete", {"elicitationId": "demo-link-1"})
    await turn.say(f"You answered **{answer.get('action')}**; I told the client the flow is complete.")
