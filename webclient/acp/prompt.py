"""A prompt as ACP content blocks (https://agentclientprotocol.com/protocol/content): the ``prompt`` array of
``session/prompt``, from the neutral blocks the session composed (`webclient.session.prompt_content`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from webclient.session.prompt_content import PromptBlock
from webclient.viewmodel.content import AudioBlock, ImageBlock, ResourceLink, TextBlock


def _present(**fields: Any) -> dict[str, Any]:
    return {name: value for name, value in fields.items() if value is not None}


def wire_block(block: PromptBlock) -> dict[str, Any]:
    """One block as the ACP ``ContentBlock`` it stands for; fields the block lacks are left out."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ImageBlock):
        return {"type": "image", **_present(mimeType=block.mime_type, data=block.data, uri=block.uri)}
    if isinstance(block, AudioBlock):
        return {"type": "audio", "mimeType": block.mime_type, "data": block.data}
    if isinstance(block, ResourceLink):
        link = _present(title=block.title, description=block.description, mimeType=block.mime_type, size=block.size)
        return {"type": "resource_link", "uri": block.uri, "name": block.name, **link}
    resource = _present(uri=block.uri, mimeType=block.mime_type, text=block.text, blob=block.blob)
    return {"type": "resource", "resource": resource}


def prompt_blocks(prompt: Sequence[PromptBlock]) -> list[dict[str, Any]]:
    """The ``prompt`` array of ``session/prompt``, in the order the user composed it."""
    return [wire_block(block) for block in prompt]
