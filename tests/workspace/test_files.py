"""Tests for webclient.workspace.files: encodings and line endings survive an agent's edit; real files, no mocks."""

from __future__ import annotations

import codecs
import random
import stat
from pathlib import Path

import pytest

from webclient.workspace.files import (
    MAX_TEXT_BYTES,
    Decoded,
    NotText,
    decode,
    encode,
    read_text_file,
    write_text_file,
)
from webclient.workspace.paths import FileTooLarge, PathRefused, Workspace

FRENCH = (
    "Le café est très bon, même à l'école.\n"
    "Où est la bibliothèque ? Ça coûte cher, dit l'élève naïve.\n"
    "Noël approche : les forêts sont déjà blanches.\n"
)
GERMAN = "Grüße aus München! Die Straße ist schön, die Äpfel und das Öl sind günstig.\n" * 2
JAPANESE = "日本語のテキストです。\nこれはテストのファイルです。\n文字コードを判定します。\n"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace([tmp_path])


def temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith(".tmp"))


# -- decode / encode -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "encoding", "text"),
    [
        (b"", "utf-8", ""),
        ("héllo\n".encode(), "utf-8", "héllo\n"),
        (codecs.BOM_UTF8 + "héllo\n".encode(), "utf-8-sig", "héllo\n"),
        (codecs.BOM_UTF16_LE + "héllo 🎉\n".encode("utf-16-le"), "utf-16", "héllo 🎉\n"),
        (codecs.BOM_UTF16_BE + "héllo 🎉\n".encode("utf-16-be"), "utf-16-be", "héllo 🎉\n"),
        (codecs.BOM_UTF32_LE + "héllo\n".encode("utf-32-le"), "utf-32", "héllo\n"),
        (codecs.BOM_UTF32_BE + "héllo\n".encode("utf-32-be"), "utf-32-be", "héllo\n"),
        (FRENCH.encode("cp1252"), "cp1252", FRENCH),
        ("café\n".encode("cp1252"), "cp1252", "café\n"),  # too short to guess: the common code page wins ties
    ],
)
def test_decode_recognises_encoding(data: bytes, encoding: str, text: str) -> None:
    decoded = decode(data)
    assert (decoded.text, decoded.encoding, decoded.newline) == (text, encoding, "\n")
    assert encode(decoded.text, decoded) == data


def test_decode_shift_jis() -> None:
    decoded = decode(JAPANESE.encode("shift_jis"))
    assert decoded.text == JAPANESE
    assert decoded.encoding in ("shift_jis", "cp932")  # cp932 is Windows' Shift-JIS, a superset


@pytest.mark.parametrize(
    ("data", "text", "newline"),
    [
        (b"a\r\nb\r\n", "a\nb\n", "\r\n"),
        (b"a\rb\r", "a\nb\n", "\r"),
        (b"a\nb", "a\nb", "\n"),
        (b"one line", "one line", "\n"),
        (b"a\r\nb\r\nc\nd", "a\nb\nc\nd", "\r\n"),  # the majority decides
        (b"a\r\nb\nc\rd", "a\nb\nc\nd", "\n"),  # a tie goes to "\n"
    ],
)
def test_decode_normalises_line_endings(data: bytes, text: str, newline: str) -> None:
    assert decode(data) == Decoded(text, "utf-8", newline)


@pytest.mark.parametrize(
    "data",
    [
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10",
        b"text with a \x00 in it",
        codecs.BOM_UTF16_LE + "a\0b".encode("utf-16-le"),
        codecs.BOM_UTF16_LE + b"\x00\xd8",  # a lone surrogate: not UTF-16 at all
        random.Random(4).randbytes(4096).replace(b"\x00", b"\x01"),
    ],
    ids=["png", "nul", "utf16-nul", "utf16-broken", "random"],
)
def test_decode_refuses_binary(data: bytes) -> None:
    with pytest.raises(NotText):
        decode(data)


def test_encode_new_file_is_utf8_as_written() -> None:
    assert encode("é\r\nx\n", None) == "é\r\nx\n".encode()


def test_encode_error_names_encoding_character_and_line() -> None:
    like = decode(FRENCH.encode("cp1252"))
    with pytest.raises(ValueError, match=r"cp1252: '日' \(U\+65E5\) on line 2"):
        encode("ok\nnot 日本 ok\n", like)
    with pytest.raises(ValueError, match=r"utf-8: '\\ud800' \(U\+D800\) on line 1"):
        encode("\ud800", None)


def test_encode_uses_the_file_line_ending_without_doubling() -> None:
    crlf = Decoded("", "utf-8", "\r\n")
    assert encode("a\nb\r\nc", crlf) == b"a\r\nb\r\nc"
    assert encode("a\nb\r\nc", Decoded("", "utf-8", "\r")) == b"a\rb\rc"


# -- read_text_file ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "limit", "expected"),
    [
        (None, None, "1\n2\n3\n4\n5"),
        (1, None, "1\n2\n3\n4\n5"),
        (2, 2, "2\n3\n"),
        (1, 1, "1\n"),
        (None, 3, "1\n2\n3\n"),
        (4, 100, "4\n5"),
        (5, None, "5"),
        (5, 1, "5"),
        (6, None, ""),
        (1000, 5, ""),
    ],
)
def test_read_line_and_limit(tmp_path: Path, ws: Workspace, line: int | None, limit: int | None, expected: str) -> None:
    (tmp_path / "n.txt").write_bytes(b"1\r\n2\r\n3\r\n4\r\n5")
    assert read_text_file(ws, str(tmp_path / "n.txt"), line, limit) == expected


def test_read_lines_split_at_newlines_only(tmp_path: Path, ws: Workspace) -> None:
    (tmp_path / "f.txt").write_text("a\fb\u2028c\x85d\ne\n")
    assert read_text_file(ws, str(tmp_path / "f.txt"), 2, 1) == "e\n"


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "2"])
@pytest.mark.parametrize("name", ["line", "limit"])
def test_read_rejects_bad_line_or_limit(tmp_path: Path, ws: Workspace, name: str, value: object) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    with pytest.raises(ValueError, match=f"{name} must be a whole number of at least 1"):
        read_text_file(ws, str(tmp_path / "f.txt"), **{name: value})  # type: ignore[arg-type]


def test_read_binary_file_is_refused_by_name(tmp_path: Path, ws: Workspace) -> None:
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(NotText, match=r"^img/logo.png is not a text file: it contains NUL bytes\.$"):
        read_text_file(ws, str(tmp_path / "img" / "logo.png"))


def test_read_size_limit(tmp_path: Path, ws: Workspace) -> None:
    (tmp_path / "big.txt").write_bytes(b"a" * MAX_TEXT_BYTES)
    assert len(read_text_file(ws, str(tmp_path / "big.txt"), 1, 1)) == MAX_TEXT_BYTES
    (tmp_path / "bigger.txt").write_bytes(b"a" * (MAX_TEXT_BYTES + 1))
    with pytest.raises(FileTooLarge, match="10,485,760 bytes"):
        read_text_file(ws, str(tmp_path / "bigger.txt"))


# -- write_text_file -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("encoding", "bom", "old", "added", "expected_encoding"),
    [
        ("utf-8", b"", "plain\n", "ünïcödé 🎉\n", "utf-8"),
        ("utf-8", codecs.BOM_UTF8, "with bom\n", "ünïcödé 🎉\n", "utf-8-sig"),
        ("utf-16-le", codecs.BOM_UTF16_LE, "wide\n", "ünïcödé 🎉\n", "utf-16"),
        ("utf-16-be", codecs.BOM_UTF16_BE, "wide\n", "ünïcödé 🎉\n", "utf-16-be"),
        ("cp1252", b"", FRENCH, "Ça coûte 5 € — « voilà ».\n", "cp1252"),
        ("latin-1", b"", GERMAN, "Füße, Größe, Maß.\n", "cp1252"),  # identical bytes for these letters
        ("shift_jis", b"", JAPANESE, "追加の行です。\n", "cp932"),
    ],
)
def test_write_keeps_encoding(
    tmp_path: Path, ws: Workspace, encoding: str, bom: bytes, old: str, added: str, expected_encoding: str
) -> None:
    path = tmp_path / "file.txt"
    path.write_bytes(bom + old.encode(encoding))
    assert read_text_file(ws, str(path)) == old
    result = write_text_file(ws, str(path), old + added)
    assert path.read_bytes() == bom + (old + added).encode(encoding)
    assert (result.path, result.old_text, result.new_text) == (path, old, old + added)
    assert (result.encoding, result.newline) == (expected_encoding, "\n")
    assert read_text_file(ws, str(path)) == old + added


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_write_keeps_line_endings(tmp_path: Path, ws: Workspace, newline: str) -> None:
    path = tmp_path / "dos.txt"
    path.write_bytes(newline.join(["one", "two", ""]).encode())
    assert read_text_file(ws, str(path)) == "one\ntwo\n"
    result = write_text_file(ws, str(path), "one\ntwo\nthree\n")
    assert path.read_bytes() == newline.join(["one", "two", "three", ""]).encode()
    assert (result.old_text, result.new_text, result.newline) == ("one\ntwo\n", "one\ntwo\nthree\n", newline)
    write_text_file(ws, str(path), "crlf\r\nfrom the agent\n")
    assert path.read_bytes() == newline.join(["crlf", "from the agent", ""]).encode()


def test_write_utf16_crlf_together(tmp_path: Path, ws: Workspace) -> None:
    path = tmp_path / "win.txt"
    path.write_bytes(codecs.BOM_UTF16_LE + "a\r\nb\r\n".encode("utf-16-le"))
    write_text_file(ws, str(path), "a\nb\nc\n")
    assert path.read_bytes() == codecs.BOM_UTF16_LE + "a\r\nb\r\nc\r\n".encode("utf-16-le")


def test_write_new_file_creates_folders(tmp_path: Path, ws: Workspace) -> None:
    result = write_text_file(ws, str(tmp_path / "src" / "pkg" / "new.py"), "print('hé')\n")
    assert (tmp_path / "src" / "pkg" / "new.py").read_bytes() == "print('hé')\n".encode()
    assert result.old_text is None
    assert (result.new_text, result.encoding, result.newline) == ("print('hé')\n", "utf-8", "\n")


def test_write_empty_existing_file_is_not_new(tmp_path: Path, ws: Workspace) -> None:
    (tmp_path / "empty.txt").write_bytes(b"")
    assert write_text_file(ws, str(tmp_path / "empty.txt"), "x").old_text == ""


def test_write_keeps_permission_bits(tmp_path: Path, ws: Workspace) -> None:
    path = tmp_path / "run.sh"
    path.write_text("#!/bin/sh\n")
    path.chmod(0o754)
    write_text_file(ws, str(path), "#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o754
    assert path.read_text() == "#!/bin/sh\necho hi\n"


def test_failed_write_changes_nothing(tmp_path: Path, ws: Workspace) -> None:
    path = tmp_path / "fr.txt"
    path.write_bytes(FRENCH.encode("cp1252"))
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(ValueError, match="cp1252: '日'"):
        write_text_file(ws, str(path), FRENCH + "日本\n")
    assert path.read_bytes() == FRENCH.encode("cp1252")
    with pytest.raises(ValueError, match="utf-8"):
        write_text_file(ws, str(tmp_path / "new" / "folder" / "x.txt"), "lone \udcff surrogate")
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert temp_files(tmp_path) == []


def test_write_over_binary_file_is_refused(tmp_path: Path, ws: Workspace) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(b"\x00\x01\x02")
    with pytest.raises(NotText, match="data.bin is not a text file"):
        write_text_file(ws, str(path), "text")
    assert path.read_bytes() == b"\x00\x01\x02"


def test_write_respects_access(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    with pytest.raises(PathRefused, match="may only read"):
        write_text_file(Workspace([tmp_path], "read-only"), str(tmp_path / "a.txt"), "b")
    with pytest.raises(PathRefused, match="turned off"):
        read_text_file(Workspace([tmp_path], "none"), str(tmp_path / "a.txt"))
    assert (tmp_path / "a.txt").read_text() == "a"
