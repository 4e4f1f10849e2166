"""Waiting for what a real agent does: its record of received messages, a condition coming true."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any


def records(path: Path) -> list[dict[str, Any]]:
    """Every JSON line of a file an agent may still be appending to: a last line without its newline is being
    written, and is left for the next read rather than failing this one."""
    if not path.exists():
        return []
    text = path.read_text()
    complete = text if text.endswith("\n") else text[: text.rfind("\n") + 1]
    return [json.loads(line) for line in complete.splitlines() if line.strip()]


def prompt_texts(messages: list[dict[str, Any]]) -> list[str]:
    """The text of every prompt among the JSON-RPC ``messages`` an agent received, in order."""
    return [
        block["text"]
        for message in messages
        if message.get("method") == "session/prompt"
        for block in message["params"]["prompt"]
        if block.get("type") == "text"
    ]


def received(record: Path) -> list[dict[str, Any]]:
    return records(record)


async def until(condition: Any, timeout: float = 10) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)
