"""A prompt the user composed, as ACP content blocks (https://agentclientprotocol.com/protocol/content).

Text first, then each uploaded file (image, audio, or an embedded resource), then each mentioned
workspace file as a ``resource_link``, which every agent must accept.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from webclient.session.uploads import Upload
from webclient.workspace.paths import PathRefused, Workspace


def upload_block(upload: Upload) -> dict[str, Any]:
    data = base64.b64encode(upload.data).decode("ascii")
    if upload.kind in ("image", "audio"):
        return {"type": upload.kind, "mimeType": upload.mime_type, "data": data}
    # Not a workspace file, so not a file: URI; the name is what the agent shows.
    resource: dict[str, Any] = {"uri": f"attachment:///{upload.id}/{quote(upload.name)}", "mimeType": upload.mime_type}
    if upload.kind == "text":
        resource["text"] = upload.text
    else:
        resource["blob"] = data
    return {"type": "resource", "resource": resource}


def mention_block(path: Path, name: str) -> dict[str, Any]:
    return {"type": "resource_link", "uri": path.as_uri(), "name": name}


def mention_blocks(workspace: Workspace, mentions: Sequence[str]) -> list[dict[str, Any]]:
    """Resource links for the workspace files the user mentioned (``@path``); other paths are dropped."""
    blocks = []
    for mention in dict.fromkeys(mentions):
        candidate = Path(mention) if Path(mention).is_absolute() else workspace.roots[0] / mention
        try:
            path = workspace.check(str(candidate))
        except PathRefused:
            continue
        if path.is_file():
            blocks.append(mention_block(path, workspace.relative(path)))
    return blocks


def prompt_blocks(text: str, attachments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``prompt`` array of ``session/prompt``: the text (if any), then the attachments' blocks."""
    return [{"type": "text", "text": text}, *attachments] if text else list(attachments)
