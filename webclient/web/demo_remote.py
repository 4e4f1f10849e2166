"""The built-in remote demo agent: the demo AAP server (``python -m demo_aap``) as a subprocess on a free loopback
port, so that a demo shows a remote agent in the same page with nothing else to run.

Started once with the web server and stopped with it; owned like an agent's process group, so the watchdog stops
it should the server die. If it cannot start, the catalogue just goes without it (and the log says why).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

from webclient.acp.process import AgentProcess, AgentStartError

logger = logging.getLogger(__name__)

START_SECONDS = 15.0
ANNOUNCEMENT = "DEMO_AAP_URL="


class DemoRemote:
    def __init__(self, process: AgentProcess, url: str) -> None:
        self.process = process
        self.url = url

    @classmethod
    async def start(cls) -> DemoRemote | None:
        try:
            # Stopped as agents are, by closing its stdin: it exits at once (a SIGTERM would come 2 s later).
            command = [sys.executable, "-m", "demo_aap", "--port", "0", "--exit-on-eof"]
            process = await AgentProcess.spawn(command, cwd=Path.cwd())
        except AgentStartError as error:
            logger.warning("the remote demo agent could not start: %s", error)
            return None
        try:
            line = (await asyncio.wait_for(process.stdout.readline(), START_SECONDS)).decode(errors="replace")
        except TimeoutError:
            line = ""
        if not line.startswith(ANNOUNCEMENT):
            logger.warning("the remote demo agent did not start: %s", process.stderr_log.tail(5) or line)
            await process.shutdown()
            return None
        return cls(process, line.removeprefix(ANNOUNCEMENT).strip())

    async def close(self) -> None:
        await self.process.shutdown()
