"""Waiting for what a real agent does: its record of received messages, a condition coming true."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any


def received(record: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


async def until(condition: Any, timeout: float = 10) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)
