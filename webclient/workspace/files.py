"""Text files as an agent sees them: ``str`` with ``"\\n"`` line endings, written back the way the file was.

ACP's ``fs/read_text_file`` and ``fs/write_text_file`` speak text, but files are bytes in whatever encoding and
line-ending convention the project uses. Reading decodes (UTF-8 first, then a byte order mark, then a guess)
and notes how; writing an existing file encodes the new text the same way, so that an edit to a CRLF,
Latin-1 or UTF-16 file changes the lines the agent changed, not every byte of the file.
Spec: https://agentclientprotocol.com/protocol/file-system
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from pathlib import Path

from webclient.workspace.paths import Workspace

__all__ = [
    "MAX_TEXT_BYTES",
    "Decoded",
    "NotText",
    "WriteResult",
    "decode",
    "encode",
    "read_text_file",
    "write_text_file",
]

MAX_TEXT_BYTES = 10 * 1024 * 1024
"""Largest file read or rewritten as text: the whole file is held in memory and sent over JSON-RPC."""

# Encodings recognised by their byte order mark: name reported -> (BOM, codec for the rest). UTF-32 comes
# before UTF-16 because the UTF-32-LE mark starts with the UTF-16-LE one. "utf-16" and "utf-32" are Python's
# names for "with a BOM", written back little-endian as Windows writes them; "utf-16-be" and "utf-32-be" are only
# reported for files that start with a BOM (UTF-16 without one is taken for binary), so they keep it too.
_BOMS: dict[str, tuple[bytes, str]] = {
    "utf-32": (codecs.BOM_UTF32_LE, "utf-32-le"),
    "utf-32-be": (codecs.BOM_UTF32_BE, "utf-32-be"),
    "utf-8-sig": (codecs.BOM_UTF8, "utf-8"),
    "utf-16": (codecs.BOM_UTF16_LE, "utf-16-le"),
    "utf-16-be": (codecs.BOM_UTF16_BE, "utf-16-be"),
}

# When charset_normalizer finds several encodings (about) equally likely, take the most common one rather than
# its first: "café" decodes without mess in dozens of code pages and would come back as cp1006 (Urdu), and a
# page of French as cp1257 (Baltic), whose mess score is a few hundredths better than cp1252's.
_NEAR = 0.05
_PREFERRED = (
    "cp1252",
    "latin_1",
    "iso8859_15",
    "cp932",
    "shift_jis",
    "euc_jp",
    "gb18030",
    "big5",
    "cp949",
    "euc_kr",
    "cp1251",
    "koi8_r",
    "cp1250",
)


@dataclass(frozen=True)
class Decoded:
    """A file's text and what it takes to write it back byte for byte."""

    text: str
    """The contents, every line ending turned into ``"\\n"``."""
    encoding: str
    """Python codec name: ``"utf-8"``, ``"utf-8-sig"`` (with BOM), ``"utf-16"``, ``"cp1252"``, ``"cp932"``..."""
    newline: str
    """The file's most frequent line ending, ``"\\n"``, ``"\\r\\n"`` or ``"\\r"``; ``"\\n"`` when it has none."""


class NotText(ValueError):
    """Bytes that are not text in any encoding we recognise: binary data."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message


@dataclass(frozen=True)
class WriteResult:
    """What `write_text_file` did, for showing the change to the user."""

    path: Path
    """The file written, resolved."""
    old_text: str | None
    """The text before (``"\\n"`` line endings); None when the file is new."""
    new_text: str
    """The text now (``"\\n"`` line endings)."""
    encoding: str
    newline: str


def decode(data: bytes) -> Decoded:
    """Decode a file's bytes: UTF-8 if they are valid UTF-8 (with or without BOM), UTF-16/32 if they start
    with its BOM, else the best guess of charset_normalizer.

    Raises:
        NotText: NUL bytes outside UTF-16/32, an encoding no guess fits, or a broken UTF-16/32 file.
    """
    for encoding, (bom, codec) in _BOMS.items():
        if data.startswith(bom):
            try:
                text = data[len(bom) :].decode(codec)
            except UnicodeDecodeError:
                raise _not_text(f"it starts like {encoding} but is not valid {encoding}") from None
            break
    else:
        if b"\0" in data:
            raise _not_text("it contains NUL bytes")
        try:
            encoding, text = "utf-8", data.decode("utf-8")
        except UnicodeDecodeError:
            encoding, text = _guess(data)
    if "\0" in text:
        raise _not_text("it contains NUL characters")
    return Decoded(_to_lf(text), encoding, _dominant_newline(text))


def encode(text: str, like: Decoded | None) -> bytes:
    """Encode `text` as the file `like` was: its encoding (and BOM) and its line ending for each ``"\\n"``.

    With `like` None (a new file): UTF-8, and the text's line endings as they are.

    Raises:
        ValueError: a character of `text` does not exist in that encoding; the message names it and its line.
    """
    encoding, newline = ("utf-8", "\n") if like is None else (like.encoding, like.newline)
    if newline != "\n":
        text = text.replace("\r\n", "\n").replace("\n", newline)  # CRLF already in the text stays single
    bom, codec = _BOMS.get(encoding, (b"", encoding))
    try:
        return bom + text.encode(codec)
    except UnicodeEncodeError as error:
        char = error.object[error.start]
        line = text.count(newline, 0, error.start) + 1
        raise ValueError(
            f"The text cannot be saved in the file's encoding, {encoding}: "
            f"{char!r} (U+{ord(char):04X}) on line {line} has no place in it."
        ) from None


def read_text_file(ws: Workspace, path: object, line: int | None = None, limit: int | None = None) -> str:
    """ACP ``fs/read_text_file``: a text file in the workspace, or `limit` lines of it from line `line`.

    Args:
        line: first line to return, 1-based; a line past the end gives ``""``.
        limit: most lines to return.

    Raises:
        ValueError: `line` or `limit` is not a whole number of at least 1.
        PathRefused, FileNotFoundError, FileTooLarge: see `Workspace.read_bytes` (limit `MAX_TEXT_BYTES`).
        NotText: the file is binary.
    """
    _check_count("line", line)
    _check_count("limit", limit)
    resolved, data = ws.read_bytes(path, max_bytes=MAX_TEXT_BYTES)
    try:
        text = decode(data).text
    except NotText as error:
        raise NotText(f"{ws.relative(resolved)} is not a text file: {error.reason}.", error.reason) from None
    if line is None and limit is None:
        return text
    start = (line or 1) - 1
    return "".join(_lines(text)[start : None if limit is None else start + limit])


def write_text_file(ws: Workspace, path: object, content: str) -> WriteResult:
    """ACP ``fs/write_text_file``: replace a text file's contents, or create it and any missing folders.

    An existing file keeps its encoding (BOM included) and line endings; the write is atomic.

    Raises:
        PathRefused, OSError: see `Workspace.write_bytes_atomic`.
        NotText: the existing file is binary; it is not overwritten with text.
        FileTooLarge: the existing file is too large to read, so its encoding cannot be kept.
        ValueError: `content` has a character the file's encoding cannot hold; nothing is written.
    """
    if not isinstance(content, str):
        raise ValueError(f"The content must be a string, not {type(content).__name__}.")
    resolved = ws.check(path, write=True)
    like: Decoded | None
    try:
        _, old = ws.read_bytes(path, max_bytes=MAX_TEXT_BYTES)
    except FileNotFoundError:
        like = None
    else:
        try:
            like = decode(old)
        except NotText as error:
            name = ws.relative(resolved)
            raise NotText(
                f"{name} is not a text file ({error.reason}), so it is not overwritten.", error.reason
            ) from None
    data = encode(content, like)
    written = ws.write_bytes_atomic(path, data)
    return WriteResult(
        path=written,
        old_text=None if like is None else like.text,
        new_text=_to_lf(content),
        encoding="utf-8" if like is None else like.encoding,
        newline="\n" if like is None else like.newline,
    )


def _guess(data: bytes) -> tuple[str, str]:
    """charset_normalizer's best encoding for `data` (not UTF-16/32, which we only take with a BOM), decoded."""
    import charset_normalizer  # here: 2.6 MiB for the first file that is not UTF-8, not for every server

    matches = [m for m in charset_normalizer.from_bytes(data) if not m.encoding.startswith(("utf_16", "utf_32"))]
    if not matches:
        raise _not_text("its encoding could not be recognised")
    best = matches[0]
    near = {
        name
        for m in matches
        if m.chaos <= best.chaos + _NEAR and m.coherence >= best.coherence - _NEAR
        for name in m.could_be_from_charset
    }
    name = next((name for name in _PREFERRED if name in near), best.encoding)
    try:
        return codecs.lookup(name).name, data.decode(name)
    except (LookupError, UnicodeDecodeError):
        raise _not_text("its encoding could not be recognised") from None


def _not_text(reason: str) -> NotText:
    return NotText(f"Not text: {reason}.", reason)


def _to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _dominant_newline(text: str) -> str:
    """The most frequent line ending; ties go to ``"\\n"``, then ``"\\r\\n"``."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    cr = text.count("\r") - crlf
    if crlf > lf and crlf >= cr:
        return "\r\n"
    if cr > lf and cr > crlf:
        return "\r"
    return "\n"


def _lines(text: str) -> list[str]:
    """`text` split after each ``"\\n"`` only (``str.splitlines`` also splits at form feeds and U+2028)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _check_count(name: str, value: object) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"{name} must be a whole number of at least 1, not {value!r}.")


def split_lines(text: str) -> tuple[list[str], bool]:
    """A decoded text (``"\\n"`` endings) as its lines, and whether the last one lacks its newline: as the diff view
    splits it (`webclient.render.highlight`), so that the review's hunk line numbers are the page's."""
    if not text:
        return [], False
    lines = text.split("\n")
    if lines[-1]:
        return lines, True
    lines.pop()
    return lines, False


def join_lines(lines: list[str], no_newline: bool) -> str:
    """`split_lines` undone."""
    if not lines:
        return ""
    return "\n".join(lines) + ("" if no_newline else "\n")
