"""Entry point: ``python -m demo_agent`` speaks ACP v1 on stdin/stdout.

stdout carries only protocol messages; logs go to stderr (level from ``DEMO_AGENT_LOG``, default WARNING).
``DEMO_AGENT_SPEED`` scales every delay (1.0 default, 0 = no delays).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys

from .agent import serve_stdio
from .turn import speed_from_env


def main() -> None:
    logging.basicConfig(
        stream=sys.stderr,
        level=os.environ.get("DEMO_AGENT_LOG", "WARNING").upper(),
        format="demo-agent %(levelname)s %(name)s: %(message)s",
    )
    try:
        asyncio.run(serve_stdio(speed_from_env()))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
