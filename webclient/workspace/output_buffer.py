"""The output of an agent terminal kept for ACP ``terminal/output``: bounded, cut on character boundaries."""

from __future__ import annotations

import codecs


class OutputBuffer:
    """The output kept for ``terminal/output``: at most `limit` bytes, the oldest dropped first.

    Cuts fall on character boundaries (a cut never leaves the tail of a UTF-8 sequence at the front), so the
    text never starts with a replacement character; what is kept may be up to 3 bytes under the limit.
    """

    def __init__(self, limit: int | None) -> None:
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be None or >= 0, got {limit}")
        self.limit = limit
        self.truncated = False
        self._data = bytearray()
        self._final = False

    def append(self, data: bytes) -> None:
        """Add output, dropping from the beginning what exceeds the limit."""
        self._data += data
        if self.limit is None or len(self._data) <= self.limit:
            return
        cut = len(self._data) - self.limit
        end = min(cut + 3, len(self._data))  # a UTF-8 sequence has at most 3 continuation bytes
        while cut < end and self._data[cut] & 0xC0 == 0x80:
            cut += 1
        del self._data[:cut]
        self.truncated = True

    def finish(self) -> None:
        """No more output is expected: an incomplete sequence at the end now decodes as a replacement character."""
        self._final = True

    def text(self) -> str:
        """The kept bytes as UTF-8 (invalid bytes replaced); an incomplete last character waits for `finish`."""
        return codecs.utf_8_decode(self._data, "replace", self._final)[0]
