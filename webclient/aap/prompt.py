"""A prompt as an AAP user message: AAP has text and images (by URL), nothing else."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from webclient.aap.meta import RemoteAgent
from webclient.session.prompt_content import PromptBlock
from webclient.viewmodel.content import EmbeddedResource, ImageBlock, ResourceLink, TextBlock


def prompt_content(prompt: Sequence[PromptBlock], remote: RemoteAgent) -> str | list[dict[str, Any]]:
    """A prompt as an AAP user message's content: its text, or text and images (as ``data:`` URLs) when the agent
    takes them. Other attachments are named in the text: AAP has no block for them."""
    image = remote.capabilities.get("image")
    takes_data = isinstance(image, dict) and isinstance(image.get("data"), dict)
    blocks: list[dict[str, Any]] = []
    for block in prompt:
        if isinstance(block, TextBlock):
            blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock) and block.data and takes_data:
            blocks.append({"type": "image", "url": f"data:{block.mime_type};base64,{block.data}"})
        elif isinstance(block, ResourceLink | EmbeddedResource):
            blocks.append({"type": "text", "text": f"(attached: {block.uri})"})
    if all(b["type"] == "text" for b in blocks):
        return "\n\n".join(b["text"] for b in blocks)
    return blocks
