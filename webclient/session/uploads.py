"""Files the user pasted or dropped into the prompt box, held until the prompt that carries them is sent."""

from __future__ import annotations

import mimetypes
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import Literal

UploadKind = Literal["image", "audio", "text", "binary"]

MAX_UPLOAD_BYTES = 10 * 1024 * 1024
MAX_HELD_BYTES = 50 * 1024 * 1024
"""What one session holds at most; the oldest unsent uploads are dropped beyond it."""

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
AUDIO_TYPES = frozenset(
    {"audio/wav", "audio/x-wav", "audio/mpeg", "audio/ogg", "audio/webm", "audio/mp4", "audio/flac"}
)
"""The media types an upload is sent as an ``image`` or ``audio`` block for; any other goes as an embedded
resource. The one classification: the prompt box's script gets these lists from the page
(``templates/session.html``), and the types the page shows (`webclient.render.formats.SAFE_IMAGE_TYPES`,
``SAFE_AUDIO_TYPES``) are these and a few more."""
NEEDED_CAPABILITY: dict[UploadKind, str] = {
    "image": "image",
    "audio": "audio",
    "text": "embeddedContext",
    "binary": "embeddedContext",
}
"""The ``promptCapabilities`` flag an agent must set to accept each kind."""


class UploadRefused(ValueError):
    """An upload we will not take; the message is for the user."""


@dataclass(frozen=True, slots=True)
class Upload:
    id: str
    name: str
    mime_type: str
    data: bytes

    @property
    def kind(self) -> UploadKind:
        if self.mime_type in IMAGE_TYPES:
            return "image"
        if self.mime_type in AUDIO_TYPES:
            return "audio"
        return "text" if self.text is not None else "binary"

    @property
    def text(self) -> str | None:
        try:
            text = self.data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return None if "\x00" in text else text


def _mime_type(name: str, declared: str) -> str:
    declared = declared.split(";")[0].strip().lower()
    if declared and declared != "application/octet-stream":
        return declared
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


def _clean_name(name: str) -> str:
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if ch.isprintable()).strip()
    return name[:200] or "pasted"


class Uploads:
    """The unsent uploads of one session, by id."""

    def __init__(self, max_held: int = MAX_HELD_BYTES) -> None:
        self._held: OrderedDict[str, Upload] = OrderedDict()
        self._max_held = max_held

    def add(self, name: str, declared_type: str, data: bytes, accepted: frozenset[str]) -> Upload:
        """Hold a file; ``accepted`` is the set of ``promptCapabilities`` the agent set."""
        if not data:
            raise UploadRefused("The file is empty.")
        if len(data) > MAX_UPLOAD_BYTES:
            raise UploadRefused(f"The file is too large ({len(data):,} bytes; at most {MAX_UPLOAD_BYTES:,}).")
        name = _clean_name(name)
        upload = Upload(secrets.token_urlsafe(9), name, _mime_type(name, declared_type), data)
        needed = NEEDED_CAPABILITY[upload.kind]
        if needed not in accepted:
            what = {"image": "images", "audio": "audio", "text": "attached files", "binary": "attached files"}[
                upload.kind
            ]
            raise UploadRefused(f"This agent does not accept {what} in prompts.")
        if len(data) > self._max_held:
            raise UploadRefused("The file is larger than what a session may hold.")
        self._held[upload.id] = upload
        while sum(len(u.data) for u in self._held.values()) > self._max_held:
            self._held.popitem(last=False)
        return upload

    def take(self, ids: list[str]) -> list[Upload]:
        """The uploads named by ``ids`` (unknown ones skipped), no longer held."""
        return [upload for upload_id in dict.fromkeys(ids) if (upload := self._held.pop(upload_id, None)) is not None]

    def get(self, upload_id: str) -> Upload | None:
        return self._held.get(upload_id)
