"""The demo agent's content blocks both ways: what ``media``, ``replay`` and ``markdown`` send, and how a prompt's
images, audio, links and embedded files are acknowledged.

Driven as a real subprocess (clients in ``tests/demo_clients.py``); what the agent sends is checked against the
official ACP v1 schema (``tests/support/schema``), and the PNG and WAV it makes are taken apart byte by byte.
"""

from __future__ import annotations

import base64
import io
import json
import random
import re
import struct
import wave
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from demo_agent import make_sample_workspace
from demo_agent.media_data import chime_wav, image_size, png_bytes, wav_info
from demo_agent.prompt_content import Prompt
from tests.support.acp_schema import validate
from tests.support.demo_clients import TARGET, RawSession, raw_agent, raw_prompt

LINE_LIMIT = 64 * 1024  # asyncio's default StreamReader limit, which many ACP clients keep


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_sample_workspace(tmp_path)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def message_text(raw: RawSession, kind: str = "agent_message_chunk") -> str:
    return "".join(u["content"]["text"] for u in raw.of(kind) if u["content"]["type"] == "text")


def checked(raw: RawSession) -> None:
    """Every notification is schema-valid and fits on a line a default asyncio reader accepts."""
    for notification in raw.notifications:
        validate(notification, "SessionNotification")
        assert len(json.dumps(notification)) < LINE_LIMIT


def png_pixels(data: bytes) -> tuple[int, int, bytes]:
    """Width, height and decompressed scanlines of an 8-bit RGB PNG, checking every chunk's CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, idat, header = 8, b"", b""
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        tag, body = data[offset + 4 : offset + 8], data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])
        assert crc == zlib.crc32(tag + body) & 0xFFFFFFFF, tag
        if tag == b"IHDR":
            header = body
        elif tag == b"IDAT":
            idat += body
        offset += 12 + length
    assert tag == b"IEND"
    width, height, depth, color = struct.unpack(">IIBB", header[:10])
    assert (depth, color) == (8, 2)
    return width, height, zlib.decompress(idat)


def test_png_and_wav_makers_and_readers_agree() -> None:
    png = png_bytes(3, 2, bytes(range(18)))
    assert image_size(png) == ("PNG", 3, 2)
    width, height, rows = png_pixels(png)
    assert (width, height) == (3, 2) and rows == b"\x00" + bytes(range(9)) + b"\x00" + bytes(range(9, 18))
    gif = b"GIF89a" + struct.pack("<HH", 64, 32) + bytes(8)
    jpeg = (
        b"\xff\xd8\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + bytes(9)
        + b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, 30, 40, 3) + bytes(9)
    )  # fmt: skip
    assert image_size(gif) == ("GIF", 64, 32) and image_size(jpeg) == ("JPEG", 40, 30)
    assert image_size(b"not an image") is None and wav_info(b"RIFF nonsense") is None
    info = wav_info(chime_wav(0.5, 8000))
    assert info is not None and (info.channels, info.rate, info.bits, info.seconds) == (1, 8000, 16, 0.5)


def test_prompt_splits_command_arguments_attachments_and_makes_a_title() -> None:
    link = {"type": "resource_link", "uri": "file:///w/src/app.py", "name": "app.py"}
    prompt = Prompt.from_wire([{"type": "text", "text": "/MODES code now"}, link, "junk", {"type": "image"}])
    assert (prompt.command, prompt.args, len(prompt.attachments)) == ("modes", "code now", 2)
    assert prompt.title() == "MODES code now"
    assert Prompt.from_wire([link]).title() == "About app.py"
    assert Prompt.from_wire([{"type": "image"}, link]).title() == "About an image and 1 more"
    assert Prompt("word " * 20).title().endswith("…") and len(Prompt("x" * 99).title()) <= 49


@pytest.mark.asyncio
async def test_media_sends_every_content_block_in_a_message_and_a_tool_call(workspace: Path) -> None:
    async with raw_agent(workspace) as raw:
        assert await raw_prompt(raw.conn, raw.session_id, "/media") == {"stopReason": "end_turn"}
    checked(raw)
    kinds = [u["sessionUpdate"] for u in raw.updates if u["sessionUpdate"] != "available_commands_update"]
    assert kinds[0] == "agent_thought_chunk"
    chunks = raw.of("agent_message_chunk")
    blocks = [u["content"] for u in chunks if u["content"]["type"] != "text"]
    assert [b["type"] for b in blocks] == ["image", "audio", "resource_link", "resource", "resource_link"]
    assert {u["messageId"] for u in chunks if u["content"]["type"] != "text"} == {chunks[0]["messageId"]}
    image, audio, file_link, embedded, web_link = blocks

    assert image["mimeType"] == "image/png"
    png = base64.b64decode(image["data"], validate=True)
    width, height, rows = png_pixels(png)
    assert (width, height) == (200, 120) and len(rows) == height * (1 + width * 3)
    assert len(set(rows)) > 50  # a picture, not a blank

    assert audio["mimeType"] == "audio/wav"
    wav = base64.b64decode(audio["data"], validate=True)
    assert wav[:4] == b"RIFF" and wav[8:16] == b"WAVEfmt "
    with wave.open(io.BytesIO(wav)) as reader:
        assert (reader.getnchannels(), reader.getsampwidth()) == (1, 2)
        assert 0.5 <= reader.getnframes() / reader.getframerate() <= 2
        samples = struct.unpack(f"<{reader.getnframes()}h", reader.readframes(reader.getnframes()))
    assert max(map(abs, samples)) > 5000

    path = Path(urlparse(file_link["uri"]).path)
    assert file_link["uri"].startswith("file:///") and path == workspace / TARGET
    assert file_link["size"] == path.stat().st_size and file_link["name"] == "calculator.py"
    resource = embedded["resource"]
    assert resource["text"] == Path(urlparse(resource["uri"]).path).read_text()
    assert Path(urlparse(resource["uri"]).path).is_relative_to(workspace)
    assert web_link["uri"].startswith("https://") and web_link["title"]

    [done] = [u for u in raw.of("tool_call_update") if u.get("status") == "completed"]
    inner = [item["content"] for item in done["content"] if item["type"] == "content"]
    assert [b["type"] for b in inner] == ["text", "image", "audio", "resource_link", "resource", "resource_link"]
    assert inner[1] == image and inner[2] == audio
    assert raw.updates[-1]["sessionUpdate"] == "usage_update"


def attachments(workspace: Path) -> list[dict[str, Any]]:
    png = png_bytes(48, 48, random.Random(7).randbytes(48 * 48 * 3))  # noise: a few KB even compressed
    return [
        {"type": "image", "mimeType": "image/png", "data": b64(png)},
        {"type": "audio", "mimeType": "audio/wav", "data": b64(chime_wav(0.5, 8000))},
        {"type": "resource_link", "uri": (workspace / TARGET).as_uri(), "name": "calculator.py"},
        {"type": "resource_link", "uri": (workspace / "src").as_uri(), "name": "src"},
        {"type": "resource_link", "uri": "file:///etc/hostname", "name": "hostname"},
        {"type": "resource_link", "uri": "https://example.com/spec", "name": "spec"},
        {
            "type": "resource",
            "resource": {"uri": "file:///n/todo.md", "mimeType": "text/markdown", "text": "a\nb\nc\n"},
        },
        {"type": "resource", "resource": {"uri": "file:///n/blob.bin", "blob": b64(bytes(2048))}},
    ]


@pytest.mark.asyncio
async def test_attachments_alone_are_each_acknowledged_concretely(workspace: Path) -> None:
    blocks = attachments(workspace)
    png_size = len(base64.b64decode(blocks[0]["data"]))
    validate({"sessionId": "s", "prompt": blocks}, "PromptRequest")
    async with raw_agent(workspace) as raw:
        assert await raw_prompt(raw.conn, raw.session_id, blocks) == {"stopReason": "end_turn"}
    checked(raw)
    assert raw.requests == []  # no fs offered: the file was read from disk
    text = message_text(raw)
    lines = text.split("You attached 8 things:")[1].strip().splitlines()[:8]
    assert lines == [
        f"- an image, PNG, 48×48 px, {png_size / 1024:.1f} KB",
        "- an audio clip, WAV, 0.5 s, 8 kHz mono, 7.9 KB",
        "- `src/calculator.py`, a workspace file with 39 lines (I read it from disk)",
        "- the folder `src/` of this workspace, 1 entries",
        "- a link to `/etc/hostname`, outside this workspace, so I did not open it",
        "- a link to <https://example.com/spec> (“spec”), which I did not fetch",
        "- an embedded file `todo.md`, text/markdown, 3 lines, 6 B",
        "- an embedded binary `blob.bin`, 2.0 KB",
    ]
    assert "`help`" in text and raw.of("agent_thought_chunk")
    [info] = raw.of("session_info_update")
    assert info["title"] == "About an image and 7 more"


@pytest.mark.asyncio
async def test_a_linked_workspace_file_is_read_through_the_client_when_offered(workspace: Path) -> None:
    def read(params: dict[str, Any]) -> dict[str, Any]:
        return {"content": "unsaved\nbuffer\n"}

    link = {"type": "resource_link", "uri": (workspace / TARGET).as_uri(), "name": "calculator.py"}
    caps = {"fs": {"readTextFile": True}}
    async with raw_agent(workspace, capabilities=caps, serve={"fs/read_text_file": read}) as raw:
        words = [{"type": "text", "text": "plan around"}, link]
        assert await raw_prompt(raw.conn, raw.session_id, words) == {"stopReason": "end_turn"}
    checked(raw)
    assert ("fs/read_text_file", {"sessionId": raw.session_id, "path": str(workspace / TARGET)}) in raw.requests
    text = message_text(raw)
    assert text.startswith("You attached one thing:\n\n- `src/calculator.py`, a workspace file with 2 lines")
    assert "through your client's `fs/read_text_file`" in text
    assert raw.of("plan")  # the named scenario still ran, after the acknowledgement


@pytest.mark.asyncio
async def test_replay_sends_user_and_agent_messages_each_with_its_own_id(workspace: Path) -> None:
    async with raw_agent(workspace) as raw:
        assert await raw_prompt(raw.conn, raw.session_id, "replay") == {"stopReason": "end_turn"}
    checked(raw)
    users = raw.of("user_message_chunk")
    user_ids = [u["messageId"] for u in users]
    assert len(set(user_ids)) == 2
    mention = next(u["content"] for u in users if u["content"]["type"] == "resource_link")
    assert mention["uri"] == (workspace / TARGET).as_uri()
    first_user = "".join(u["content"].get("text", "@") for u in users if u["messageId"] == user_ids[0])
    assert first_user == "What happens in @ when I divide by zero?"
    agent_ids = {u["messageId"] for u in raw.of("agent_message_chunk") + raw.of("agent_thought_chunk")}
    assert len(agent_ids) >= 4 and not agent_ids & set(user_ids)
    kinds = [u["sessionUpdate"] for u in raw.updates]
    assert kinds.index("user_message_chunk") < kinds.index("agent_thought_chunk") < kinds.index("tool_call")
    assert "ZeroDivisionError" in message_text(raw)


@pytest.mark.asyncio
async def test_markdown_is_one_long_answer_with_every_element(workspace: Path) -> None:
    async with raw_agent(workspace) as raw:
        assert await raw_prompt(raw.conn, raw.session_id, "markdown") == {"stopReason": "end_turn"}
    answer = message_text(raw)
    assert len({u["messageId"] for u in raw.of("agent_message_chunk")}) == 1
    languages = set(re.findall(r"^```(\w+)$", answer, re.MULTILINE))
    assert {"python", "typescript", "rust", "json", "bash", "diff"} <= languages
    assert answer.startswith("## Markdown showcase")
    for needle in ("\n### ", "\n#### ", "| Scenario |", "\n> ", "\n1. ", "\n  - ", "](https://", "`help`"):
        assert needle in answer, needle
