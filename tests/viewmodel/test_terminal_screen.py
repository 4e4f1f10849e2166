"""Tests for webclient.viewmodel.terminal_screen: bytes as a program writes them in, lines and HTML out."""

from __future__ import annotations

from bs4 import BeautifulSoup

from tests.support.servers import ROOT
from webclient.render.terminal import line_html, palette_css, palette_index
from webclient.viewmodel.terminal_screen import Line, Run, Style, TerminalScreen


def texts(lines: list[Line]) -> list[str]:
    return ["".join(run.text for run in line) for line in lines]


def fed(*chunks: bytes, columns: int = 120, rows: int = 40, max_lines: int = 5000) -> TerminalScreen:
    screen = TerminalScreen(columns, rows, max_lines)
    for chunk in chunks:
        screen.feed(chunk)
    return screen


def test_plain_lines_show_as_lines_with_the_cursor_row_kept() -> None:
    screen = fed(b"one\ntwo  \nthree\n")
    assert texts(screen.screen()) == ["one", "two", "three", ""]
    assert screen.plain_text() == "one\ntwo\nthree\n"
    assert screen.committed == []
    assert fed(b"no newline").screen() == [(Run("no newline", Style()),)]


def test_empty_screen_is_one_empty_row() -> None:
    assert TerminalScreen().screen() == [()]
    assert TerminalScreen().plain_text() == ""


def test_carriage_return_progress_bar_ends_as_one_line_in_its_final_state() -> None:
    screen = fed(*(f"\rdownloading [{'#' * i:<10}] {i * 10:3d}%".encode() for i in range(11)), b"\ndone\n")
    assert texts(screen.screen()) == ["downloading [##########] 100%", "done", ""]


def test_crlf_and_lf_give_the_same_lines() -> None:
    assert fed(b"a\r\nb\r\n").plain_text() == fed(b"a\nb\n").plain_text() == "a\nb\n"


def test_erase_line_clears_what_was_there() -> None:
    screen = fed(b"old text that is long\r\x1b[2Knew\n", b"keep this\x1b[5D\x1b[K\n")
    assert texts(screen.screen()) == ["new", "keep", ""]


def test_cursor_up_rewrites_earlier_lines_in_place() -> None:
    # How multi-bar progress displays (pip, cargo, docker pull) redraw their rows.
    screen = fed(b"layer1: waiting\nlayer2: waiting\n", b"\x1b[2A\r\x1b[Klayer1: done\n\x1b[Klayer2: done\n")
    assert texts(screen.screen()) == ["layer1: done", "layer2: done", ""]


def test_erase_screen_and_home() -> None:
    assert texts(fed(b"a\nb\nc", b"\x1b[H\x1b[2Jtop").screen()) == ["top"]


def test_sixteen_colours_and_attributes_become_styles() -> None:
    screen = fed(b"\x1b[31mred\x1b[0m \x1b[1;3;4;9;7;93;44mall\x1b[0m \x1b[105mbg\x1b[0m")
    [line] = screen.screen()
    assert line == (
        Run("red", Style(fg="red")),
        Run(" ", Style()),
        Run("all", Style("brightyellow", "blue", bold=True, italic=True, underline=True, strike=True, reverse=True)),
        Run(" ", Style()),
        Run("bg", Style(bg="brightmagenta")),  # pyte 0.8.2 calls it "bfightmagenta"
    )


def test_256_and_truecolour_become_palette_names_or_hex() -> None:
    [line] = fed(b"\x1b[38;5;1ma\x1b[38;5;208mb\x1b[38;2;161;178;195;48;2;0;0;1mc").screen()
    assert [run.style.fg for run in line] == ["red", "ff8700", "a1b2c3"]
    assert line[2].style.bg == "000001"


def test_line_html_uses_classes_for_names_and_the_nearest_palette_colour_for_hex() -> None:
    [line] = fed(b"plain \x1b[1;32mok\x1b[0m \x1b[38;2;161;178;195mhex\x1b[0m \x1b[7;31mrev").screen()
    soup = BeautifulSoup(line_html(line), "html.parser")
    spans = soup.find_all("span")
    assert soup.get_text() == "plain ok hex rev"
    assert [span.get_text() for span in spans] == ["ok", "hex", "rev"]
    assert spans[0]["class"] == ["t-fg-green", "t-b"]
    assert spans[1]["class"] == ["t-fg-249"]  # #b2b2b2, the palette's nearest to #a1b2c3
    assert not soup.find_all(style=True)  # no style attribute: the page's CSP allows no inline style
    assert spans[2]["class"] == ["t-bg-red", "t-rev"]  # reverse: the red goes to the background
    assert not soup.find_all(string=lambda s: "span" in s)


def test_256_colours_map_exactly_and_true_colours_to_the_nearest_of_the_palette() -> None:
    [line] = fed(b"\x1b[38;5;208ma\x1b[48;5;17mb\x1b[38;5;255;48;2;250;0;0mc").screen()
    assert [span["class"] for span in BeautifulSoup(line_html(line), "html.parser").find_all("span")] == [
        ["t-fg-208"],
        ["t-fg-208", "t-bg-17"],
        ["t-fg-255", "t-bg-196"],  # #fa0000 is nearest #ff0000
    ]
    assert palette_index("080808") == 232 and palette_index("eeeeee") == 255


def test_the_palette_stylesheet_is_the_one_shipped() -> None:
    shipped = ROOT / "static" / "terminal-colours.css"
    assert shipped.read_text() == palette_css()
    assert ".t-fg-208 { color: #ff8700; }" in palette_css()


def test_line_html_drops_colours_that_are_neither_names_nor_six_hex_digits() -> None:
    line = (
        Run("a", Style(fg='red" onclick="x')),
        Run("b", Style(bg="12c0000")),
        Run("c", Style(fg="url(javascript:x)", bold=True)),
    )
    assert line_html(line) == 'ab<span class="t-b">c</span>'


def test_output_that_looks_like_markup_stays_text() -> None:
    [line] = fed(b'<script>alert(1)</script> & \x1b[31m<b>"x"</b>').screen()
    html = line_html(line)
    soup = BeautifulSoup(html, "html.parser")
    assert soup.find("script") is None and soup.find("b") is None
    assert soup.get_text() == '<script>alert(1)</script> & <b>"x"</b>'
    assert "&lt;script&gt;" in html


def test_utf8_split_across_feeds() -> None:
    data = "é日本🎉 ok\n".encode()
    for cut in range(1, len(data)):
        screen = fed(data[:cut], data[cut:])
        assert screen.plain_text() == "é日本🎉 ok\n", cut


def test_invalid_utf8_becomes_replacement_characters() -> None:
    assert fed(b"a\xff\xfeb").plain_text() == "a\ufffd\ufffdb"


def test_escape_sequence_split_across_feeds() -> None:
    data = b"\x1b[38;2;161;178;195mx\x1b[0m y"
    for cut in range(1, len(data)):
        [line] = fed(data[:cut], data[cut:]).screen()
        assert line == (Run("x", Style(fg="a1b2c3")), Run(" y", Style())), cut


def test_lines_scrolling_off_the_top_are_committed_once_and_never_change() -> None:
    screen = fed(b"".join(b"line %d\n" % i for i in range(8)), rows=5)
    assert texts(screen.committed) == ["line 0", "line 1", "line 2", "line 3"]
    assert texts(screen.screen()) == ["line 4", "line 5", "line 6", "line 7", ""]
    first = screen.committed[:]
    screen.feed(b"\x1b[H\x1b[2Jredrawn\n")
    assert screen.committed == first
    assert screen.plain_text().splitlines() == [*texts(first), "redrawn"]


def test_committed_lines_keep_their_styles() -> None:
    screen = fed(b"\x1b[32mgreen\x1b[0m\n" * 3, rows=2)
    assert screen.committed == [(Run("green", Style(fg="green")),)] * 2


def test_long_lines_wrap_and_commit_per_row() -> None:
    screen = fed(b"abcdefghij" * 2 + b"\n", columns=10, rows=2)
    assert texts(screen.committed) == ["abcdefghij"]
    assert texts(screen.screen()) == ["abcdefghij", ""]


def test_max_lines_drops_oldest_committed_lines_and_counts_them() -> None:
    screen = fed(b"".join(b"%d\n" % i for i in range(20)), rows=3, max_lines=5)
    assert texts(screen.committed) == ["13", "14", "15", "16", "17"]
    assert screen.dropped == 13
    assert screen.plain_text() == "13\n14\n15\n16\n17\n18\n19\n"


def test_alternate_screen_leaves_no_history_and_restores_the_main_screen() -> None:
    screen = fed(b"before\n", b"\x1b[?1049h", b"".join(b"frame %d\n" % i for i in range(50)), b"\x1b[?1049l")
    assert screen.committed == []
    assert texts(screen.screen()) == ["before", ""]


def test_scroll_region_below_the_top_does_not_commit() -> None:
    # A pinned header (row 1) with a scrolling region under it: nothing leaves the screen for good.
    screen = fed(b"header\n\x1b[2;4r\x1b[2;1H", b"".join(b"%d\n" % i for i in range(10)), rows=4)
    assert screen.committed == []
    assert texts(screen.screen())[0] == "header"


def test_background_coloured_trailing_spaces_are_kept() -> None:
    [line] = fed(b"bar\x1b[44m   \x1b[0m   ").screen()
    assert line == (Run("bar", Style()), Run("   ", Style(bg="blue")))


def test_version_changes_only_when_something_changed() -> None:
    screen = TerminalScreen()
    screen.feed(b"a")
    version = screen.version
    screen.feed(b"")
    screen.feed(b"\x1b[3")  # an incomplete escape sequence changes nothing yet
    assert screen.version == version
    screen.feed(b"1mb")
    assert screen.version == version + 1


def test_unusual_sequences_do_not_break_the_screen() -> None:
    screen = fed(b"\x1b[4Jx\x1b[999;999Hy\x1b[38;5;999mz\x1b]0;title\x07\x1b[?2004h\x00\x7f!\n")
    assert "x" in screen.plain_text() and "!" in screen.plain_text()


def test_wide_characters_take_two_cells_but_appear_once() -> None:
    assert fed("日本語\n".encode(), columns=4).plain_text() == "日本\n語\n"
