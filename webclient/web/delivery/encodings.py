"""Content codings: which one a browser takes (brotli when the ``brotli`` package is there, else gzip), and the bytes.

Used by the compression middleware (`webclient.web.delivery.compression`) for pages, and by the static files
(`webclient.web.delivery.assets`), which compress each file once, harder, and keep the result.
"""

from __future__ import annotations

import zlib
from typing import Any, Literal

try:  # a dependency (pyproject), but an install without it still serves gzip
    import brotli as _brotli  # type: ignore[import-untyped]

    brotli: Any = _brotli
except ImportError:  # pragma: no cover - the tests run with it installed
    brotli = None

Coding = Literal["br", "gzip"]

MIN_SIZE = 500
"""Bytes below which a body goes as it is: it fits one packet anyway, and the coding's own bytes eat the gain."""

COMPRESSIBLE = (
    "text/",
    "application/javascript",
    "application/json",
    "application/xml",
    "image/svg+xml",
)
"""Media types that are text (HTML, CSS, JavaScript, Markdown, JSON, SVG); images and archives come compressed."""


def compressible(media_type: str) -> bool:
    return media_type.strip().lower().startswith(COMPRESSIBLE)


def accepted(accept_encoding: str) -> set[str]:
    """The codings an ``Accept-Encoding`` header allows (a ``q=0`` refuses one)."""
    allowed: set[str] = set()
    for item in accept_encoding[:500].split(","):
        name, _, params = item.strip().partition(";")
        quality = params.strip().removeprefix("q=").strip() if params.strip().startswith("q=") else "1"
        try:
            wanted = float(quality) > 0
        except ValueError:
            wanted = False
        if name and wanted:
            allowed.add(name.strip().lower())
    return allowed


def chosen_coding(accept_encoding: str) -> Coding | None:
    """Brotli if the browser takes it and the package is installed, else gzip if it takes that, else None."""
    allowed = accepted(accept_encoding)
    if "br" in allowed and brotli is not None:
        return "br"
    if "gzip" in allowed or "*" in allowed:
        return "gzip"
    return None


def compressed(data: bytes, coding: Coding, *, best: bool) -> bytes:
    """``data`` in ``coding``; ``best`` (static files, done once) spends the CPU for the smallest result."""
    if coding == "br":
        result: bytes = brotli.compress(data, quality=11 if best else 5)
        return result
    level = 9 if best else 6
    packer = zlib.compressobj(level, zlib.DEFLATED, 31)  # 31: the gzip container
    return packer.compress(data) + packer.flush()


class StreamPacker:
    """Compresses a streamed body piece by piece, each flushed: the browser gets a piece when the server sends it."""

    def __init__(self, coding: Coding) -> None:
        self.coding = coding
        self._br = brotli.Compressor(quality=5) if coding == "br" else None
        self._gzip = zlib.compressobj(6, zlib.DEFLATED, 31) if coding == "gzip" else None

    def piece(self, data: bytes) -> bytes:
        if self._br is not None:
            return bytes(self._br.process(data)) + bytes(self._br.flush())
        assert self._gzip is not None
        return self._gzip.compress(data) + self._gzip.flush(zlib.Z_SYNC_FLUSH)

    def end(self) -> bytes:
        if self._br is not None:
            return bytes(self._br.finish())
        assert self._gzip is not None
        return self._gzip.flush()
