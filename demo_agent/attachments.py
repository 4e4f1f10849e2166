"""Acknowledging what a prompt brings besides text, one concrete line per attachment.

The agent advertises ``promptCapabilities {image, audio, embeddedContext}``, so a prompt may carry images,
audio, ``resource_link`` blocks (e.g. ``@``-mentioned workspace files) and embedded ``resource`` blocks.
Images report their format, pixel size (read from the PNG ``IHDR``, GIF or JPEG header) and byte size; WAV
audio its duration; a link to a workspace file is read — through ``fs/read_text_file`` when the client offers
it, else from disk — and its lines counted; embedded text resources are counted too. Links elsewhere are never
opened. https://agentclientprotocol.com/protocol/content
"""

from __future__ import annotations

import base64
import binascii
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

from .media_data import human_size, image_size, wav_info
from .prompt_content import attachment_name
from .turn import Turn


def _decoded(block: dict[str, Any], key: str = "data") -> bytes | None:
    data = block.get(key)
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _mime(block: dict[str, Any], fallback: str) -> str:
    mime = block.get("mimeType")
    return mime if isinstance(mime, str) and mime else fallback


def _lines(text: str) -> str:
    count = len(text.splitlines())
    return f"{count} line{'s' if count != 1 else ''}"


def describe_image(block: dict[str, Any]) -> str:
    mime = _mime(block, "image/?")
    data = _decoded(block)
    if data is None:
        return f"an image ({mime}) whose data is not valid base64"
    size = image_size(data)
    if size is None:
        return f"an image, {mime}, {human_size(len(data))} (a format I can't measure)"
    kind, width, height = size
    return f"an image, {kind}, {width}×{height} px, {human_size(len(data))}"


def describe_audio(block: dict[str, Any]) -> str:
    mime = _mime(block, "audio/?")
    data = _decoded(block)
    if data is None:
        return f"an audio clip ({mime}) whose data is not valid base64"
    info = wav_info(data)
    if info is None:
        return f"an audio clip, {mime}, {human_size(len(data))}"
    channels = {1: "mono", 2: "stereo"}.get(info.channels, f"{info.channels} channels")
    return f"an audio clip, WAV, {info.seconds:.1f} s, {info.rate / 1000:g} kHz {channels}, {human_size(len(data))}"


def workspace_rel(turn: Turn, uri: str) -> str | None:
    """The workspace-relative path of a ``file://`` URI inside the session folder, else ``None``."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    path = Path(url2pathname(parsed.path))
    try:
        rel = path.resolve().relative_to(turn.workspace.root)
    except (ValueError, OSError):
        return None
    return rel.as_posix()


async def describe_link(turn: Turn, block: dict[str, Any]) -> str:
    uri = block.get("uri")
    name = attachment_name(block)
    if not isinstance(uri, str) or not uri:
        return f"a link named “{name}” without a URI"
    rel = workspace_rel(turn, uri)
    if rel is None:
        if urlparse(uri).scheme == "file":
            return f"a link to `{unquote(urlparse(uri).path)}`, outside this workspace, so I did not open it"
        return f"a link to <{uri}> (“{name}”), which I did not fetch"
    folder = turn.workspace.root / rel
    if folder.is_dir():
        try:
            entries = f", {len(list(folder.iterdir()))} entries"
        except OSError:
            entries = ""
        return f"the folder `{rel}/` of this workspace{entries}"
    text = await turn.read_text(rel)
    if text is None:
        return f"`{rel}`, a workspace file I could not read as text"
    via = "through your client's `fs/read_text_file`" if turn.can_read else "from disk"
    return f"`{rel}`, a workspace file with {_lines(text)} (I read it {via})"


def describe_resource(block: dict[str, Any]) -> str:
    resource = block.get("resource")
    if not isinstance(resource, dict):
        return "an embedded resource without content"
    name = attachment_name(block)
    mime = _mime(resource, "")
    kind = f", {mime}" if mime else ""
    if isinstance(resource.get("text"), str):
        text = resource["text"]
        return f"an embedded file `{name}`{kind}, {_lines(text)}, {human_size(len(text.encode()))}"
    data = _decoded(resource, "blob")
    if data is None:
        return f"an embedded resource `{name}` with neither text nor a valid blob"
    return f"an embedded binary `{name}`{kind}, {human_size(len(data))}"


async def describe(turn: Turn, block: dict[str, Any]) -> str:
    """One line about one attached block."""
    kind = block.get("type")
    if kind == "image":
        return describe_image(block)
    if kind == "audio":
        return describe_audio(block)
    if kind == "resource_link":
        return await describe_link(turn, block)
    if kind == "resource":
        return describe_resource(block)
    return f"a `{kind}` block, a type I don't know"


async def acknowledge(turn: Turn) -> None:
    """Say what the prompt brought, one bullet per attachment."""
    attachments = turn.prompt.attachments
    lines = [f"- {await describe(turn, block)}" for block in attachments]
    count = len(attachments)
    head = "You attached one thing:" if count == 1 else f"You attached {count} things:"
    await turn.say(head + "\n\n" + "\n".join(lines) + "\n\n")


async def run_attachments(turn: Turn) -> None:
    """The reply to a prompt of attachments (and maybe text that names no scenario): what they were."""
    await turn.think(
        "The prompt came with attachments and no scenario name. I'll say what each one is, concretely, "
        "so the user can see exactly what arrived."
    )
    await acknowledge(turn)
    await turn.say(
        "I'm only a demo agent, so that's all I do with them. Start a prompt with a scenario name to run it "
        "(attachments are acknowledged first), type `help` for the list, or `media` to see blocks like these "
        "going the other way.\n"
    )
