"""A prompt the user composed, as protocol-neutral content blocks: the same blocks the thread shows.

Text first, then each uploaded file (image, audio, or an embedded resource), then each mentioned workspace
file as a link. The protocol adapter puts them on the wire (`webclient.acp.prompt` for ACP).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from webclient.session.uploads import Upload
from webclient.viewmodel.content import AudioBlock, EmbeddedResource, ImageBlock, ResourceLink, TextBlock
from webclient.workspace.paths import PathRefused, Workspace

PromptBlock = TextBlock | ImageBlock | AudioBlock | ResourceLink | EmbeddedResource
"""What a prompt can carry."""


def upload_content(upload: Upload) -> PromptBlock:
    data = base64.b64encode(upload.data).decode("ascii")
    if upload.kind == "image":
        return ImageBlock(mime_type=upload.mime_type, data=data)
    if upload.kind == "audio":
        return AudioBlock(mime_type=upload.mime_type, data=data)
    # Not a workspace file, so not a file: URI; the name is what the agent shows.
    uri = f"attachment:///{upload.id}/{quote(upload.name)}"
    if upload.kind == "text":
        return EmbeddedResource(uri=uri, mime_type=upload.mime_type, text=upload.text)
    return EmbeddedResource(uri=uri, mime_type=upload.mime_type, blob=data)


def file_link(path: Path, name: str) -> ResourceLink:
    return ResourceLink(uri=path.as_uri(), name=name)


def mentioned_files(workspace: Workspace, mentions: Sequence[str]) -> list[ResourceLink]:
    """Links to the workspace files the user mentioned (``@path``); other paths are dropped."""
    links = []
    for mention in dict.fromkeys(mentions):
        candidate = Path(mention) if Path(mention).is_absolute() else workspace.roots[0] / mention
        try:
            path = workspace.check(str(candidate))
        except PathRefused:
            continue
        if path.is_file():
            links.append(file_link(path, workspace.relative(path)))
    return links


def prompt_content(text: str, attachments: Sequence[PromptBlock]) -> list[PromptBlock]:
    """The whole prompt: the text (if any), then the attachments."""
    return [TextBlock(text=text), *attachments] if text else list(attachments)
