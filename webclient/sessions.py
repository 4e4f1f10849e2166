"""The sessions this server runs, and how a new one gets its agent and workspace."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from webclient.acp.process import split_command
from webclient.config import Settings
from webclient.demo_agent.workspace import make_sample_workspace
from webclient.rendering import MessageDocs
from webclient.session import AgentSpec, Session


class SessionManager:
    """Creates sessions, finds them by id, and stops them all when the server stops."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.sessions: dict[str, Session] = {}
        self.docs: dict[str, MessageDocs] = {}
        self._scratch: list[Path] = []

    def create(self) -> Session:
        """A new session with its agent starting in the background."""
        workspace = self.settings.workspace
        if workspace is None:
            if self.settings.is_demo:
                # The demo never works in the user's own folder: it gets a fresh copy of the sample.
                workspace = make_sample_workspace()
                self._scratch.append(workspace)
            else:
                workspace = Path(os.getcwd())
        spec = AgentSpec(
            argv=split_command(self.settings.agent_command),
            cwd=workspace,
            extra_roots=self.settings.extra_roots,
            file_access=self.settings.file_access,
            terminals=self.settings.terminals,
            start_timeout=self.settings.start_timeout,
            max_line_bytes=self.settings.max_line_mb * 1024 * 1024,
        )
        session = Session(spec)
        self.sessions[session.id] = session
        self.docs[session.id] = MessageDocs()
        session.start()
        return session

    def get(self, session_id: str) -> Session | None:
        return self.sessions.get(session_id)

    async def end(self, session: Session) -> None:
        await session.close()

    async def close_all(self) -> None:
        await asyncio.gather(*(s.close() for s in self.sessions.values()), return_exceptions=True)
        for path in self._scratch:
            shutil.rmtree(path, ignore_errors=True)
