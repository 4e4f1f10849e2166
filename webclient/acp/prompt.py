"""A prompt as ACP content blocks (https://agentclientprotocol.com/protocol/content): the ``prompt`` array of
``session/prompt``, from the neutral blocks the session composed (`webclient.session.prompt_content`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from webclient.acp import wire
from webclient.session.prompt_content import PromptBlock
from webclient.viewmodel.content import AudioBlock, ImageBlock, ResourceLink, TextBlock


def _present(**fields: Any) -> dict[str, Any]:
    return {name: value for name, value in fields.items() if value is not None}


def wire_block(block: PromptBlock) -> wire.ContentBlock:
    """One block as the ACP ``ContentBlock`` it stands for; fields the block lacks are left out."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ImageBlock):
        # An image known by its uri alone goes without the data the schema asks for, as the block holds it.
        return cast(
            wire.ImageContent, {"type": "image", **_present(mimeType=block.mime_type, data=block.data, uri=block.uri)}
        )
    if isinstance(block, AudioBlock):
        return {"type": "audio", "mimeType": block.mime_type, "data": block.data}
    if isinstance(block, ResourceLink):
        link: wire.ResourceLink = {"type": "resource_link", "uri": block.uri, "name": block.name}
        if block.title is not None:
            link["title"] = block.title
        if block.description is not None:
            link["description"] = block.description
        if block.mime_type is not None:
            link["mimeType"] = block.mime_type
        if block.size is not None:
            link["size"] = block.size
        return link
    # Its text or its blob, as the block holds them (the schema's two shapes of a resource).
    resource = _present(uri=block.uri, mimeType=block.mime_type, text=block.text, blob=block.blob)
    return {"type": "resource", "resource": cast(wire.EmbeddedResourceResource, resource)}


def prompt_blocks(prompt: Sequence[PromptBlock]) -> list[wire.ContentBlock]:
    """The ``prompt`` array of ``session/prompt``, in the order the user composed it."""
    return [wire_block(block) for block in prompt]
