"""Steering: a prompt the client sends into the running turn (``_session/steering``, the extension claude-agent-acp
and codex-acp serve, advertised as ``_meta.steering.supported`` in ``initialize``).

The ``steer`` scenario works through the sample project slowly; a prompt sent meanwhile with "Send now" arrives
here, and the scenario changes course at its next step and says so.
"""

from __future__ import annotations

from typing import Any

from .jsonrpc import RequestError
from .session_state import SessionState
from .turn import Turn

ADVERTISED = {"steering": {"supported": True}}
"""What ``initialize`` says in its ``_meta``."""

STEPS = ("src/calculator.py", "tests/test_calculator.py", "README.md", "pyproject.toml", "the TODOs", "the tests")


def take_steering(session: SessionState, params: dict[str, Any]) -> dict[str, Any]:
    """``_session/steering {sessionId, prompt}``: the prompt's text joins the running turn; refused without one."""
    if session.turn is None:
        raise RequestError.invalid_request({"details": "no turn is running to steer"})
    blocks = params.get("prompt")
    text = " ".join(
        block["text"]
        for block in (blocks if isinstance(blocks, list) else [])
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    ).strip()
    session.steering.append(text or "(no text)")
    return {}


async def run_steer(turn: Turn) -> None:
    await turn.say(
        "I'll look through the project one file at a time, slowly. **Type a prompt now and press Send now** to"
        " steer me while I work; it reaches me in this turn instead of waiting in the queue.\n\n"
    )
    for round_ in range(3):
        for step in STEPS:
            if turn.session.steering:
                said = turn.session.steering.pop(0)
                await turn.say(f"\n\n**Steered:** you said “{said}”. Changing course: I'll do that next.\n")
                await turn.say(f"Done: {said} — taken into this turn without starting a new one.\n")
                return
            await turn.say(f"- Looking at {step}{' again' if round_ else ''}…\n", words=6)
            await turn.pause(0.6)
    await turn.say("\nNobody steered me, so that's the whole walk-through.\n")
