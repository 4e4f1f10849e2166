"""The helpers templates use: formats (``webclient.render.formats``) and DOM ids (``webclient.render.dom``)."""

from __future__ import annotations

import pytest

from webclient.render.dom import (
    dom_id,
    live_id,
    markdown_id,
    terminal_id,
    terminal_lines_id,
    terminal_screen_id,
)
from webclient.render.formats import file_uri_path, money, size, tokens
from webclient.render.message_docs import MessageDocs
from webclient.render.rendering import Renderer
from webclient.viewmodel.entries import MessageEntry, ToolCall
from webclient.viewmodel.events import Region
from webclient.viewmodel.terminals import TerminalView


@pytest.mark.parametrize(
    ("count", "shown"),
    [
        (0, "0"),
        (950, "950"),
        (999, "999"),
        (1000, "1k"),
        (1500, "1.5k"),
        (9_999, "10k"),
        (12_345, "12k"),
        (999_999, "999k"),
        (1_000_000, "1M"),
        (1_200_000, "1.2M"),
        (25_000_000, "25M"),
    ],
)
def test_tokens(count: int, shown: str) -> None:
    assert tokens(count) == shown


@pytest.mark.parametrize(
    ("amount", "currency", "shown"),
    [
        (0.42, "USD", "$0.42"),
        (1234.5, "USD", "$1,234.50"),
        (0.5, "usd", "$0.50"),
        (3, "EUR", "€3.00"),
        (0.42, "CHF", "0.42 CHF"),
        (0.42, "chf", "0.42 CHF"),
        (0.42, None, "0.42"),
        (0.42, "", "0.42"),
    ],
)
def test_money(amount: float, currency: str | None, shown: str) -> None:
    assert money(amount, currency) == shown


def test_money_cuts_an_overlong_currency_code() -> None:
    assert money(1, "X" * 100) == "1.00 " + "X" * 12


@pytest.mark.parametrize(
    ("uri", "path"),
    [
        ("file:///a/b", "/a/b"),
        ("file:///a/b%20c/%C3%BC.py", "/a/b c/ü.py"),
        ("file://localhost/x", "/x"),
        ("FILE:///a", "/a"),
        ("file:///", "/"),
    ],
)
def test_file_uri_path(uri: str, path: str) -> None:
    assert file_uri_path(uri) == path


@pytest.mark.parametrize(
    "uri",
    [
        "file://server/share/x",
        "file://example.com/etc/passwd",
        "http://localhost/a/b",
        "https://example.com/a",
        "attachment:///abc/notes.txt",
        "/a/b",
        "file:",
        "file://",
        "file://[::1/x",  # malformed: urlsplit raises
        "",
    ],
)
def test_file_uri_path_of_other_uris_is_none(uri: str) -> None:
    assert file_uri_path(uri) is None


def test_file_uri_path_is_always_absolute() -> None:
    assert file_uri_path("file:relative/path") is None


@pytest.mark.parametrize(
    ("count", "shown"),
    [
        (0, "0 B"),
        (512, "512 B"),
        (1023, "1023 B"),
        (1024, "1.0 KB"),
        (3174, "3.1 KB"),
        (1024 * 1024, "1.0 MB"),
        (int(2.4 * 1024 * 1024), "2.4 MB"),
        (5 * 1024**3, "5120.0 MB"),
    ],
)
def test_size(count: int, shown: str) -> None:
    assert size(count) == shown


def test_the_ids_python_targets_are_the_ids_templates_give() -> None:
    renderer = Renderer()
    entry = MessageEntry(seq=7, turn=1, parts=["Hello"])
    message = renderer.page("_message.html", entry=entry, message=MessageDocs().view(entry, 0.0), oob=None)
    for element in (dom_id(entry), markdown_id(entry), live_id(entry)):
        assert message.count(f'id="{element}"') == 1, element
    tid = terminal_id(ToolCall(seq=3, turn=1), 2)
    terminal = renderer.page("_terminal.html", term=TerminalView("t", 2), tid=tid, oob=None)
    for element in (tid, terminal_lines_id(tid), terminal_screen_id(tid)):
        assert terminal.count(f'id="{element}"') == 1, element


@pytest.mark.parametrize("region", [r for r in Region if r not in (Region.LOCATION, Region.DROPPED)])
def test_every_region_the_page_shows_is_a_block_of_the_page(region: Region) -> None:
    assert str(region) in Renderer().env.get_template("session.html").blocks
