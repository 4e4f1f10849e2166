"""The prompt the user composed, as ACP content blocks (``webclient.acp.prompt``), checked against the schema."""

from __future__ import annotations

import base64
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]  # no types-jsonschema in the dev extras
import pytest

from tests.support.acp_schema import validate
from webclient.acp.prompt import prompt_blocks, wire_block
from webclient.session.prompt_content import file_link, prompt_content, upload_content
from webclient.session.uploads import Uploads

EVERYTHING = frozenset({"image", "audio", "embeddedContext"})
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
BINARY = b"\x00\x01\x02\xff"


def test_prompt_blocks_text_first_then_uploads_then_mentions(tmp_path: Path) -> None:
    uploads = Uploads()
    image = uploads.add("shot.png", "image/png", PNG, EVERYTHING)
    target = tmp_path / "src" / "main.py"
    blocks = prompt_blocks(prompt_content("Look at this", [upload_content(image), file_link(target, "src/main.py")]))
    assert [b["type"] for b in blocks] == ["text", "image", "resource_link"]
    assert blocks[0] == {"type": "text", "text": "Look at this"}
    for block in blocks:
        validate(block, "ContentBlock")


def test_prompt_blocks_without_text_has_no_text_block(tmp_path: Path) -> None:
    assert prompt_blocks(prompt_content("", [])) == []
    link = file_link(tmp_path / "a", "a")
    assert [b["type"] for b in prompt_blocks(prompt_content("", [link]))] == ["resource_link"]


@pytest.mark.parametrize(
    ("name", "declared", "data"), [("shot.png", "image/png", PNG), ("clip.wav", "audio/wav", b"RIFF\x00\xff")]
)
def test_prompt_blocks_image_and_audio_are_base64(name: str, declared: str, data: bytes) -> None:
    upload = Uploads().add(name, declared, data, EVERYTHING)
    block = wire_block(upload_content(upload))
    assert block == {"type": upload.kind, "mimeType": declared, "data": base64.b64encode(data).decode("ascii")}
    validate(block, "ContentBlock")
    validate(block, "ImageContent" if upload.kind == "image" else "AudioContent")


def test_prompt_blocks_text_file_is_an_embedded_resource_with_text() -> None:
    upload = Uploads().add("my notes.md", "text/markdown", "# Hi\nthere ✓\n".encode(), EVERYTHING)
    block = wire_block(upload_content(upload))
    assert block["type"] == "resource"
    resource = block["resource"]
    assert resource["text"] == "# Hi\nthere ✓\n"
    assert "blob" not in resource
    assert resource["mimeType"] == "text/markdown"
    assert resource["uri"].endswith("/my%20notes.md")
    assert not resource["uri"].startswith("file:")
    validate(block, "ContentBlock")
    validate(resource, "TextResourceContents")


def test_prompt_blocks_binary_file_is_an_embedded_resource_with_a_blob() -> None:
    upload = Uploads().add("data.bin", "", BINARY, EVERYTHING)
    block = wire_block(upload_content(upload))
    resource = block["resource"]
    assert base64.b64decode(resource["blob"]) == BINARY
    assert "text" not in resource
    assert resource["mimeType"] == "application/octet-stream"
    validate(block, "ContentBlock")
    validate(resource, "BlobResourceContents")


def test_prompt_blocks_mention_is_a_resource_link_with_a_file_uri(tmp_path: Path) -> None:
    target = tmp_path / "dir with space" / "ünï.py"
    block = wire_block(file_link(target, "dir with space/ünï.py"))
    assert block == {"type": "resource_link", "uri": target.as_uri(), "name": "dir with space/ünï.py"}
    assert block["uri"].startswith("file:///")
    assert "%20" in block["uri"]
    validate(block, "ContentBlock")
    validate(block, "ResourceLink")


def test_prompt_blocks_keep_the_order_of_uploads_and_mentions(tmp_path: Path) -> None:
    uploads = Uploads()
    first = uploads.add("b.txt", "text/plain", b"b", EVERYTHING)
    second = uploads.add("a.png", "image/png", PNG, EVERYTHING)
    attachments = [upload_content(first), upload_content(second), file_link(tmp_path / "z", "z")]
    blocks = prompt_blocks(prompt_content("x", [*attachments, file_link(tmp_path / "y", "y")]))
    assert [b["type"] for b in blocks] == ["text", "resource", "image", "resource_link", "resource_link"]
    assert [b["name"] for b in blocks[3:]] == ["z", "y"]
    validate({"sessionId": "s1", "prompt": blocks}, "PromptRequest")


def test_schema_check_rejects_a_malformed_block() -> None:
    with pytest.raises(jsonschema.ValidationError):
        validate({"type": "image", "data": "AA=="}, "ContentBlock")  # no mimeType
    with pytest.raises(jsonschema.ValidationError):
        validate({"type": "resource", "resource": {"uri": "attachment:///x"}}, "ContentBlock")  # neither text nor blob
