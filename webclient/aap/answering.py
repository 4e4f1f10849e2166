"""Answering the calls a remote turn left open (AAP v3's ``tool_use``): every one of them, into one list of messages
for one ``POST /sessions/:id/turns``.

An untrusted (or undeclared) server tool becomes a question on its card, granted or denied; the client's own tools
run here, asking first when they change things. What a client tool told the agent is journalled, so that after a
restart the same call is answered with the same result rather than run again (a command that appends to a file
would append twice).
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from webclient.aap.asking import ALLOW, ALWAYS, CLIENT_OPTIONS, SERVER_OPTIONS, Asking, denial
from webclient.aap.fold import TERMINAL_SHOWN
from webclient.aap.hands import CHANGES_THINGS, Hands
from webclient.aap.turn import OpenCall, TurnEvent, tool_permission, tool_result


class Shows(Protocol):
    """Where the answers are shown and journalled (`webclient.aap.agent.AapAgent`)."""

    def card(self, call_id: str, status: str, content: Any = None) -> None: ...

    def show(self, event: TurnEvent) -> None: ...

    def record(self, direction: str, record: dict[str, Any]) -> None: ...


class Answering:
    def __init__(self, asking: Asking, hands: Hands, shows: Shows) -> None:
        self.asking = asking
        self.hands = hands
        self.shows = shows
        self.told: dict[str, dict[str, Any]] = {}
        """The client tools' results as sent (or about to be), by call id: live, or as the journal says."""

    def replay(self, record: dict[str, Any]) -> bool:
        """Take up a journalled result of a client tool; False when ``record`` is not one."""
        message = record.get("message")
        if not isinstance(record.get("told"), str) or not isinstance(message, dict):
            return False
        self.told[record["told"]] = message
        return True

    async def answer(self, open_calls: list[OpenCall]) -> list[dict[str, Any]]:
        """Every open call answered, in one list: server tools granted or denied, client tools run (asked first when
        they change things). The questions are all on the page at once; each client tool runs once the client tool
        before it has (the agent's order: a command after a write sees the file); the answers go back together."""
        answers, before = [], None
        for open_call in open_calls:
            answer = asyncio.ensure_future(self._answer_call(open_call, before))
            before = answer if open_call.side == "client" else before
            answers.append(answer)
        return list(await asyncio.gather(*answers))

    async def _answer_call(self, open_call: OpenCall, before: asyncio.Future[dict[str, Any]] | None) -> dict[str, Any]:
        call = open_call.call
        if open_call.side == "client" and call.id in self.told:
            return self.told[call.id]  # it ran before a restart: its card shows it, the agent is told the same
        answer = await self._decide(open_call)
        if answer is not None:
            return answer
        if before is not None:
            await asyncio.wait([before])
        self.shows.card(call.id, "in_progress")

        def show_terminal(terminal_id: str) -> None:
            self.shows.show(TurnEvent(TERMINAL_SHOWN, {"toolCallId": call.id, "terminalId": terminal_id}))

        ran = await self.hands.run(call.name, call.input, show_terminal)
        result = self.told[call.id] = tool_result(call.id, ran.text)
        self.shows.record("out", {"told": call.id, "message": result})
        self.shows.card(call.id, "failed" if ran.failed else "completed", ran.shown)
        return result

    async def _decide(self, open_call: OpenCall) -> dict[str, Any] | None:
        """A server tool's grant or denial, or a client tool's refusal; None: a client tool to run."""
        call = open_call.call
        if open_call.side == "server":
            chosen, reason = await self.asking.ask(call.id, SERVER_OPTIONS)
            granted = chosen == ALLOW
            self.shows.card(call.id, "in_progress" if granted else "failed", None if granted else denial(reason))
            return tool_permission(call.id, granted, reason if not granted else None)
        if call.name in CHANGES_THINGS and call.name not in self.asking.allowed_tools:
            chosen, _ = await self.asking.ask(call.id, CLIENT_OPTIONS)
            if chosen == ALWAYS:
                self.asking.allowed_tools.add(call.name)
            elif chosen != ALLOW:
                self.shows.card(call.id, "failed", "The person did not let this tool run.")
                return tool_result(call.id, "The person did not let this tool run.")
        return None
