"""Per-entity cancel (the v2 draft): ``tool_call/cancel`` and ``terminal/cancel``, sent only for a tool call or a
terminal that advertises ``capabilities.cancel`` now, on a connection that speaks v2. The answer means "accepted":
the card says "Stopping…" until the agent reports a new status (a tool call) or an exit (a terminal).
Spec: schema ``v2/schema.unstable.json`` ``CancelToolCallRequest``, ``CancelTerminalRequest``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from webclient.acp.jsonrpc import RpcError
from webclient.acp.peer import Peer
from webclient.viewmodel.changes import Change
from webclient.viewmodel.thread import Thread


async def cancel_entity(
    peer: Peer, thread: Thread, changed: Callable[[Change], None], session_id: str, kind: str, entity_id: str
) -> bool:
    """Ask the agent to stop one tool call or terminal; False (nothing sent) when it does not advertise that it
    can be cancelled now, or the user already asked. An error answer takes the "Stopping…" back, and is raised."""
    undo: Callable[[], None]
    if kind == "tool_call":
        call = thread.tool_call(entity_id)
        if call is None or not call.can_cancel or call.stopping:
            return False
        call.stop_asked_in = call.effective_status
        change: Change = call.change
        undo = lambda: setattr(call, "stop_asked_in", None)  # noqa: E731
        params: dict[str, Any] = {"sessionId": session_id, "toolCallId": entity_id}
    elif kind == "terminal":
        terminal = thread.terminals.get(entity_id)
        if terminal is None or terminal.stop_asked or not thread.terminals.ask_stop(entity_id):
            return False
        change = terminal.change
        undo = lambda: setattr(terminal, "stop_asked", False)  # noqa: E731
        params = {"sessionId": session_id, "terminalId": entity_id}
    else:
        return False
    changed(change)
    try:
        await peer.request(f"{kind}/cancel", params)
    except RpcError:
        undo()
        changed(change)
        raise
    return True
