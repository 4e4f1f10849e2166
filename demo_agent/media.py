"""The ``media`` scenario: every content block type, in an agent message and again as tool-call content.

An image (a PNG bar chart of the workspace's line counts, drawn in pure Python), an audio clip (a one-second
WAV chime), a ``resource_link`` to a workspace file (``file://`` URI), an embedded ``resource`` with a file's
text, and a ``resource_link`` to a web page. https://agentclientprotocol.com/protocol/content
"""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import Any

from . import texts
from .media_data import bar_chart_png, chime_wav
from .tool_demos import text_item
from .turn import STEP_DELAY, Turn

CHART_FILES = 6
FALLBACK_VALUES = [3, 5, 8, 13, 8, 5]
WEB_LINK: dict[str, Any] = {
    "type": "resource_link",
    "uri": "https://agentclientprotocol.com/protocol/content",
    "name": "content",
    "title": "ACP: Content",
    "description": "How ACP messages carry text, images, audio and resources",
    "mimeType": "text/html",
}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _mime_of(rel: str) -> str:
    guessed, _ = mimetypes.guess_type(rel)
    if guessed:
        return guessed
    return {".toml": "application/toml", ".md": "text/markdown"}.get(Path(rel).suffix, "text/plain")


async def _chart(turn: Turn) -> tuple[dict[str, Any], str]:
    """The image block, and a caption naming what each bar stands for."""
    files = turn.workspace.text_files()[:CHART_FILES]
    counts = [(rel, len((turn.workspace.read(rel) or "").splitlines())) for rel in files]
    values = [n for _, n in counts] or FALLBACK_VALUES
    block = {"type": "image", "mimeType": "image/png", "data": _b64(bar_chart_png(values))}
    if counts:
        caption = "Lines per file, left to right: " + ", ".join(f"`{rel}` {n}" for rel, n in counts) + "."
    else:
        caption = "An empty workspace, so the bars are made up."
    return block, caption


def _link(turn: Turn, rel: str) -> dict[str, Any]:
    path = turn.workspace.path(rel)
    return {
        "type": "resource_link",
        "uri": path.as_uri(),
        "name": Path(rel).name,
        "title": rel,
        "mimeType": _mime_of(rel),
        "size": path.stat().st_size,
    }


async def _embedded(turn: Turn, rel: str) -> dict[str, Any] | None:
    text = await turn.read_text(rel)
    if text is None:
        return None
    resource = {"uri": turn.workspace.path(rel).as_uri(), "mimeType": _mime_of(rel), "text": text}
    return {"type": "resource", "resource": resource}


async def run_media(turn: Turn) -> None:
    await turn.think(texts.MEDIA_THOUGHT)
    ws = turn.workspace
    linked = ws.first_existing("src/calculator.py")
    embedded_rel = ws.first_existing("tests/test_calculator.py", "README.md")
    image, caption = await _chart(turn)
    audio = {"type": "audio", "mimeType": "audio/wav", "data": _b64(chime_wav())}
    link = _link(turn, linked) if linked else None
    embedded = await _embedded(turn, embedded_rel) if embedded_rel else None

    message = await turn.say("## Every kind of content block\n\n**An image** — a PNG I drew in pure Python:\n\n")
    await turn.send_block(image, message_id=message)
    await turn.say(f"\n\n{caption}\n\n**An audio clip** — a one-second WAV chime:\n\n", message_id=message)
    await turn.send_block(audio, message_id=message)
    if link is not None:
        await turn.say("\n\n**A link to a workspace file** (a `file://` URI):\n\n", message_id=message)
        await turn.send_block(link, message_id=message)
    if embedded is not None:
        await turn.say(f"\n\n**An embedded resource** — the text of `{embedded_rel}`:\n\n", message_id=message)
        await turn.send_block(embedded, message_id=message)
    await turn.say("\n\n**A link to a web page:**\n\n", message_id=message)
    await turn.send_block(WEB_LINK, message_id=message)
    await turn.say("\n\nAnd the same blocks once more, as the content of a tool call:\n\n", message_id=message)

    tool_id = await turn.tool("media", "Render a chart and a chime", "other", "in_progress")
    await turn.pause(STEP_DELAY)
    blocks = [image, audio] + [b for b in (link, embedded) if b is not None] + [WEB_LINK]
    await turn.tool_update(
        tool_id,
        status="completed",
        content=[text_item(caption)] + [{"type": "content", "content": block} for block in blocks],
        rawOutput={"image": "image/png", "audio": "audio/wav", "links": 1 + (link is not None)},
    )
    await turn.say(texts.MEDIA_OUTRO)
