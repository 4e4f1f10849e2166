"""Uploads held until sent (``webclient.session.uploads``)."""

from __future__ import annotations

import pytest

from webclient.session.uploads import MAX_UPLOAD_BYTES, Upload, UploadRefused, Uploads

EVERYTHING = frozenset({"image", "audio", "embeddedContext"})
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
BINARY = b"\x00\x01\x02\xff"


# --- kinds -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "declared", "data", "kind", "mime_type"),
    [
        ("shot.png", "image/png", PNG, "image", "image/png"),
        ("photo", "image/jpeg", b"\xff\xd8\xff", "image", "image/jpeg"),
        ("clip.wav", "audio/wav", b"RIFF\x00\x00", "audio", "audio/wav"),
        ("song", "audio/mpeg", b"ID3\x00", "audio", "audio/mpeg"),
        ("notes.txt", "text/plain", "héllo\n".encode(), "text", "text/plain"),
        ("data.json", "application/json", b'{"a": 1}', "text", "application/json"),
        ("archive.zip", "application/zip", b"PK\x03\x04\x00", "binary", "application/zip"),
        # Text by content even when the type says otherwise; binary when it has NUL or is not UTF-8.
        ("thing", "application/x-thing", b"plain words", "text", "application/x-thing"),
        ("nul.txt", "text/plain", b"abc\x00def", "binary", "text/plain"),
        ("latin1.txt", "text/plain", "café".encode("latin-1"), "binary", "text/plain"),
    ],
)
def test_add_kind_by_mime_type_and_content(name: str, declared: str, data: bytes, kind: str, mime_type: str) -> None:
    upload = Uploads().add(name, declared, data, EVERYTHING)
    assert (upload.kind, upload.mime_type) == (kind, mime_type)


def test_add_image_type_is_trusted_over_content() -> None:
    upload = Uploads().add("x.png", "image/png", b"not really a png", EVERYTHING)
    assert upload.kind == "image"


def test_upload_text_is_the_decoded_text_or_none() -> None:
    assert Upload("i", "a.txt", "text/plain", "naïve".encode()).text == "naïve"
    assert Upload("i", "a.bin", "application/octet-stream", BINARY).text is None


@pytest.mark.parametrize(
    ("name", "declared", "mime_type"),
    [
        ("shot.png", "", "image/png"),
        ("shot.png", "application/octet-stream", "image/png"),
        ("page.html", "", "text/html"),
        ("no-extension", "", "application/octet-stream"),
        ("shot.png", "IMAGE/JPEG; charset=binary", "image/jpeg"),  # declared wins, without parameters, lower case
        ("notes.txt", " text/markdown ", "text/markdown"),
    ],
)
def test_add_uses_the_declared_type_else_guesses_from_the_name(name: str, declared: str, mime_type: str) -> None:
    assert Uploads().add(name, declared, PNG if "png" in mime_type else b"x", EVERYTHING).mime_type == mime_type


def test_add_guessed_image_type_makes_an_image() -> None:
    upload = Uploads().add("shot.png", "", PNG, EVERYTHING)
    assert upload.kind == "image"


# --- refusals ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "declared", "data", "accepted", "what"),
    [
        ("a.png", "image/png", PNG, frozenset({"audio", "embeddedContext"}), "images"),
        ("a.wav", "audio/wav", b"RIFF", frozenset({"image", "embeddedContext"}), "audio"),
        ("a.txt", "text/plain", b"hello", frozenset({"image", "audio"}), "attached files"),
        ("a.bin", "application/octet-stream", BINARY, frozenset({"image", "audio"}), "attached files"),
        ("a.txt", "text/plain", b"hello", frozenset(), "attached files"),
    ],
)
def test_add_refuses_what_the_agent_does_not_accept(
    name: str, declared: str, data: bytes, accepted: frozenset[str], what: str
) -> None:
    with pytest.raises(UploadRefused) as refused:
        Uploads().add(name, declared, data, accepted)
    assert str(refused.value) == f"This agent does not accept {what} in prompts."


def test_add_accepts_each_kind_with_only_its_capability() -> None:
    uploads = Uploads()
    assert uploads.add("a.png", "image/png", PNG, frozenset({"image"})).kind == "image"
    assert uploads.add("a.wav", "audio/wav", b"RIFF", frozenset({"audio"})).kind == "audio"
    assert uploads.add("a.txt", "text/plain", b"hi", frozenset({"embeddedContext"})).kind == "text"
    assert uploads.add("a.bin", "", BINARY, frozenset({"embeddedContext"})).kind == "binary"


def test_add_refuses_an_empty_file() -> None:
    with pytest.raises(UploadRefused, match="empty"):
        Uploads().add("a.txt", "text/plain", b"", EVERYTHING)


def test_add_refuses_a_file_that_is_too_large() -> None:
    uploads = Uploads()
    assert len(uploads.add("a.bin", "", bytes(MAX_UPLOAD_BYTES), EVERYTHING).data) == MAX_UPLOAD_BYTES
    with pytest.raises(UploadRefused, match="too large"):
        uploads.add("a.bin", "", bytes(MAX_UPLOAD_BYTES + 1), EVERYTHING)


def test_upload_refused_is_a_value_error() -> None:
    assert issubclass(UploadRefused, ValueError)


# --- names -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "cleaned"),
    [
        ("notes.txt", "notes.txt"),
        ("/etc/passwd", "passwd"),
        ("../../secret.txt", "secret.txt"),
        ("C:\\Users\\me\\report.txt", "report.txt"),
        ("bad\x00na\nme\x1b.txt", "badname.txt"),
        ("  spaced.txt  ", "spaced.txt"),
        ("", "pasted"),
        ("dir/", "pasted"),
        ("\x07\x08", "pasted"),
        ("a" * 300, "a" * 200),
    ],
)
def test_add_cleans_the_name(given: str, cleaned: str) -> None:
    assert Uploads().add(given, "text/plain", b"x", EVERYTHING).name == cleaned


# --- holding and taking ------------------------------------------------------------------------


def test_add_holds_the_upload_under_a_fresh_id() -> None:
    uploads = Uploads()
    first = uploads.add("a.txt", "text/plain", b"a", EVERYTHING)
    second = uploads.add("a.txt", "text/plain", b"a", EVERYTHING)
    assert first.id != second.id
    assert uploads.get(first.id) is first
    assert uploads.get(second.id) is second
    assert uploads.get("nope") is None


def test_held_bytes_cap_drops_the_oldest() -> None:
    uploads = Uploads(max_held=10)
    oldest = uploads.add("1.txt", "text/plain", b"aaaa", EVERYTHING)
    middle = uploads.add("2.txt", "text/plain", b"bbbb", EVERYTHING)
    assert uploads.get(oldest.id) is oldest  # 8 bytes: both held
    newest = uploads.add("3.txt", "text/plain", b"cccc", EVERYTHING)
    assert uploads.get(oldest.id) is None
    assert uploads.get(middle.id) is middle
    assert uploads.get(newest.id) is newest


def test_take_returns_in_the_order_asked_skips_unknown_ids_and_removes() -> None:
    uploads = Uploads()
    a, b, c = (uploads.add(f"{n}.txt", "text/plain", n.encode(), EVERYTHING) for n in "abc")
    assert uploads.take([c.id, "unknown", a.id, c.id]) == [c, a]
    assert uploads.get(a.id) is None
    assert uploads.get(c.id) is None
    assert uploads.get(b.id) is b
    assert uploads.take([a.id, c.id]) == []
    assert uploads.take([]) == []
