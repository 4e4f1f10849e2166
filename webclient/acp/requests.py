"""The requests a session makes of its ACP agent that only ask and show the answer: settings, title, sign-in and
sign-out, the agent's own sessions. `AcpAgent` inherits them; each goes to the connection in the version it
speaks (`webclient.acp.versions`)."""

from __future__ import annotations

from webclient.acp.answers import answer
from webclient.acp.connection import AgentConnection
from webclient.acp.controls import settings
from webclient.acp.listing import list_all
from webclient.acp.versions import Dialect, Greeting
from webclient.session.agent import AgentHost, AgentSession


class SessionRequests:
    """What `AcpAgent` provides these requests with: its host, the version it speaks, and its connection."""

    host: AgentHost
    dialect: Dialect
    greeting: Greeting
    _session_id: str | None

    def _connected(self) -> AgentConnection:
        raise NotImplementedError

    def _in_session(self) -> tuple[AgentConnection, str]:
        raise NotImplementedError

    def _offers(self, capability: str) -> bool:
        """Whether the agent offers ``session/<capability>`` (v1: ``sessionCapabilities``; v2: the baseline too)."""
        return capability in self.greeting.session_methods

    async def set_title(self, title: str) -> None:
        if self._offers("title") and self._session_id is not None:
            connection, session_id = self._in_session()
            await answer(connection.session_request("session/set_title", session_id, title=title))

    async def forget(self) -> None:
        if self._offers("delete") and self._session_id is not None:
            connection, session_id = self._in_session()
            await answer(connection.session_request("session/delete", session_id))

    async def list_sessions(self) -> list[AgentSession] | None:
        """``session/list``, every page of it, when the agent offers it."""
        return await answer(list_all(self._connected())) if self._offers("list") else None

    async def sign_in(self, method_id: str) -> None:
        await answer(self._connected().authenticate(method_id, self.dialect.sign_in_method))

    async def sign_out(self) -> None:
        """``logout`` (https://agentclientprotocol.com/protocol/initialization#logout; v2: ``auth/logout``)."""
        await answer(self._connected().peer.request(self.dialect.sign_out_method, {}))

    async def set_mode(self, mode_id: str) -> None:
        connection, session_id = self._in_session()
        await answer(connection.set_mode(session_id, mode_id))
        self.host.controls.set_current_mode(mode_id)

    async def set_model(self, model_id: str) -> None:
        connection, session_id = self._in_session()
        await answer(connection.set_model(session_id, model_id))
        self.host.controls.set_current_model(model_id)

    async def set_setting(self, setting_id: str, value: str | bool) -> None:
        connection, session_id = self._in_session()
        result = await answer(connection.set_config_option(session_id, setting_id, self.dialect.config_value(value)))
        if isinstance(result.get("configOptions"), list):  # the agent's complete settings
            self.host.controls.set_settings(settings(result["configOptions"]))
