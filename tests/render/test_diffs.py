"""Tests for webclient.render.diffs and the templates that show it (_diff.html, _file_view.html)."""

from __future__ import annotations

from typing import Any

import pytest
from bs4 import BeautifulSoup, Tag
from jinja2 import Environment

from webclient.render.diffs import (
    CHUNK,
    FILE_WINDOW,
    DiffView,
    GapBlock,
    HunkBlock,
    build_diff,
    diff_layout,
    expand_file,
    expand_gap,
    file_view,
    gap_rows,
    parse_gap,
)
from webclient.render.rendering import Renderer, make_environment


@pytest.fixture(scope="module")
def env() -> Environment:
    env = make_environment()
    env.globals.update(gap_rows=gap_rows, expand_gap=expand_gap, expand_file=expand_file)
    return env


def render(env: Environment, diff: DiffView, **context: Any) -> str:
    return env.get_template("_diff.html").render(diff=diff, diff_id="diff-1", **context)


def soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def numbered(count: int, prefix: str = "line") -> str:
    return "".join(f"{prefix} {n}\n" for n in range(1, count + 1))


def hunks(diff: DiffView) -> list[HunkBlock]:
    return [block for block in diff.blocks if isinstance(block, HunkBlock)]


def gaps(diff: DiffView) -> list[GapBlock]:
    return [block for block in diff.blocks if isinstance(block, GapBlock)]


def code_text(cell: Tag) -> str:
    """The code of a row as the user reads it (the marker and line numbers are CSS or other cells)."""
    return cell.get_text().replace("⊘", "")


# -- new, deleted, unchanged ------------------------------------------------------------------------


def test_new_file_renders_as_a_file_not_green_rows(env: Environment) -> None:
    diff = build_diff(None, "import os\n\nprint(os.name)\n", "tool/run.py")
    assert (diff.status, diff.added, diff.removed, diff.total_lines) == ("added", 3, 0, 3)
    page = soup(render(env, diff))
    details = page.select_one("details#diff-1.diff")
    assert details is not None and details.has_attr("open") and details["data-path"] == "tool/run.py"
    assert "New file · 3 lines" in page.select_one(".d-head").get_text(" ", strip=True)
    assert not page.select(".d-add") and not page.select("[data-action=diff-mode]")
    rows = page.select("table.d-file tr")
    assert [row.select_one(".d-num").get_text() for row in rows] == ["1", "2", "3"]
    assert code_text(rows[2].select_one(".d-code")) == "print(os.name)"
    assert rows[0].select_one(".hl-kn") is not None  # highlighted: "import"


def test_deleted_file_is_collapsed_and_shows_what_it_was(env: Environment) -> None:
    diff = build_diff("a = 1\nb = 2\n", None, "old.py")
    assert (diff.status, diff.added, diff.removed, diff.total_lines) == ("deleted", 0, 2, 2)
    page = soup(render(env, diff))
    assert not page.select_one("details.diff").has_attr("open")
    assert "Deleted · 2 lines" in page.select_one(".d-head").get_text(" ", strip=True)
    assert [code_text(td) for td in page.select("table.d-file .d-code")] == ["a = 1", "b = 2"]
    opened = soup(render(env, diff, expanded=True))
    assert opened.select_one("details.diff").has_attr("open")


def test_unchanged_file_has_no_changes(env: Environment) -> None:
    text = numbered(10)
    diff = build_diff(text, text, "same.txt")
    assert (diff.status, diff.added, diff.removed, hunks(diff)) == ("unchanged", 0, 0, [])
    assert "No changes" in soup(render(env, diff)).select_one(".d-head").get_text()


def test_crlf_and_lf_count_as_equal() -> None:
    diff = build_diff("one\r\ntwo\r\n", "one\ntwo\n", "win.txt")
    assert (diff.status, diff.added, diff.removed) == ("unchanged", 0, 0)
    changed = build_diff("one\r\ntwo\r\n", "one\nTWO\n", "win.txt")
    assert (changed.added, changed.removed) == (1, 1)


def test_missing_final_newline_is_a_change_and_is_marked(env: Environment) -> None:
    diff = build_diff("a\nb\n", "a\nb", "f.txt")
    assert (diff.no_newline_at_end_old, diff.no_newline_at_end_new) == (False, True)
    assert (diff.status, diff.added, diff.removed) == ("modified", 1, 1)
    rows = hunks(diff)[0].unified_rows
    assert [(row.kind, row.no_newline) for row in rows] == [("ctx", False), ("del", False), ("add", True)]
    marker = soup(render(env, diff)).select_one("tr.d-add .d-nonl")
    assert marker is not None and marker["title"] == "No newline at end of file"


def test_both_sides_missing_is_an_error() -> None:
    with pytest.raises(ValueError, match="needs an old or a new text"):
        build_diff(None, None, "x")


# -- modified files ---------------------------------------------------------------------------------


def test_modified_file_has_counts_hunks_gaps_and_line_numbers(env: Environment) -> None:
    old = numbered(100)
    new = old.replace("line 10\n", "line ten\n").replace("line 80\n", "line 80\nline 80b\n")
    diff = build_diff(old, new, "notes.txt")
    assert (diff.status, diff.added, diff.removed, diff.total_lines) == ("modified", 2, 1, 101)
    assert [(g.start, g.end, g.old_start, g.old_end, g.count) for g in gaps(diff)] == [
        (1, 6, 1, 6, 6),
        (14, 77, 14, 77, 64),
        (85, 101, 84, 100, 17),
    ]
    first, second = hunks(diff)
    assert first.header == "@@ -7,7 +7,7 @@"
    assert [(r.kind, r.old_no, r.new_no) for r in first.unified_rows][2:5] == [
        ("ctx", 9, 9),
        ("del", 10, None),
        ("add", None, 10),
    ]
    assert [(r.kind, r.old_no, r.new_no) for r in second.unified_rows] == [
        ("ctx", 78, 78),
        ("ctx", 79, 79),
        ("ctx", 80, 80),
        ("add", None, 81),
        ("ctx", 81, 82),
        ("ctx", 82, 83),
        ("ctx", 83, 84),
    ]
    page = soup(render(env, diff))
    assert page.select_one("details.diff").has_attr("open")
    assert page.select_one(".d-plus").get_text() == "+2" and page.select_one(".d-minus").get_text() == "−1"
    button = page.select_one("button[data-action=diff-mode]")
    assert button is not None and button["data-mode"] == "split" and button["type"] == "button"
    assert len(page.select("tbody.d-hunk")) == 2
    # Small gaps come hidden in the page; the 64-line one loads on click.
    hidden = page.select("tbody.d-gap-rows[hidden]")
    assert [len(body.select("tr")) for body in hidden] == [6, 17]
    lazy = page.select("button.d-expand[hx-get]")
    assert [b["hx-get"] for b in lazy] == [] and "64 unchanged lines" in page.get_text()
    with_url = soup(render(env, diff, body_url="/s/1/diff?path=notes.txt"))
    (button,) = with_url.select("button.d-expand[hx-get]")
    assert button["hx-get"] == "/s/1/diff?path=notes.txt&gap=14-77"
    assert (button["hx-trigger"], button["hx-swap"], button["hx-target"]) == (
        "click once",
        "outerHTML",
        "closest tbody",
    )


def test_split_view_pairs_a_replaced_block_line_by_line(env: Environment) -> None:
    diff = build_diff("keep\nold 1\nold 2\nold 3\nkeep\n", "keep\nnew 1\nnew 2\nkeep\n", "f.txt")
    rows = hunks(diff)[0].split_rows
    assert len(rows) == 5
    pairs = [(r.left.no if r.left else None, r.right.no if r.right else None) for r in rows]
    assert pairs == [(1, 1), (2, 2), (3, 3), (4, None), (5, 4)]
    assert [(r.left.kind if r.left else None, r.right.kind if r.right else None) for r in rows] == [
        ("ctx", "ctx"),
        ("del", "add"),
        ("del", "add"),
        ("del", None),
        ("ctx", "ctx"),
    ]
    page = soup(render(env, diff, diff_mode="split"))
    table = page.select_one("table.d-split")
    assert table is not None and page.select_one("details.diff")["data-mode"] == "split"
    assert all(len(tr.select("td")) == 4 for tr in table.select("tbody.d-hunk tr"))
    assert len(table.select("td.d-code.d-none")) == 1
    assert page.select_one("button[data-action=diff-mode]")["data-mode"] == "unified"


@pytest.mark.parametrize("choice", [None, "", "unified", "Split", "split ", "<b>", 1])
def test_any_layout_but_split_draws_one_column(env: Environment, choice: object) -> None:
    assert diff_layout(choice) == "unified"
    diff = build_diff("keep\nold\nkeep\n", "keep\nnew\nkeep\n", "f.txt")
    chosen = {} if choice is None else {"diff_mode": choice}
    page = soup(render(env, diff, **chosen))
    assert page.select_one("details.diff")["data-mode"] == "unified" and page.select_one("table.d-unified")
    assert page.select_one("button[data-action=diff-mode]")["data-mode"] == "split"
    assert diff_layout("split") == "split"


def test_changed_words_are_emphasised_within_a_line() -> None:
    diff = build_diff("total = price * count\n", "total = price * amount\n", "calc.py")
    deleted, added = hunks(diff)[0].unified_rows
    assert soup(deleted.html).select_one(".d-chg").get_text() == "count"
    assert soup(added.html).select_one(".d-chg").get_text() == "amount"
    unlike = build_diff("alpha beta\n", "1234 + 5678\n", "x.txt")
    assert "d-chg" not in "".join(row.html for row in hunks(unlike)[0].unified_rows)


def test_a_multiline_string_is_highlighted_as_a_string_where_it_changes() -> None:
    head = numbered(30, "x =")
    old = head + 'DOC = """\nfirst\nsecond\n"""\n'
    diff = build_diff(old, old.replace("second", "changed"), "doc.py")
    added = next(row for row in hunks(diff)[0].unified_rows if row.kind == "add")
    assert soup(added.html).select_one("span")["class"][0].startswith("hl-s")


def test_big_file_highlights_a_docstring_line_deep_inside_it() -> None:
    """Big files are lexed in windows; a window must still start outside the docstring it shows."""
    functions = [
        f'def f{n}(x):\n    """Doc of f{n}.\n\n    More words.\n    """\n    return x + {n}\n' for n in range(3000)
    ]
    old = "\n\n".join(functions)
    new = old.replace("Doc of f1500.\n\n    More words.", "Doc of f1500.\n\n    Other words.")
    diff = build_diff(old, new, "big.py")
    assert (diff.added, diff.removed) == (1, 1) and len(old) > 100_000
    added = next(row for row in hunks(diff)[0].unified_rows if row.kind == "add")
    assert soup(added.html).select_one("span")["class"][0] in ("hl-sd", "hl-s2")


# -- big files --------------------------------------------------------------------------------------


def test_big_file_with_two_changes_renders_small_and_opens_gaps_lazily(env: Environment) -> None:
    old = numbered(20_000, "value =")
    new = old.replace("value = 5000\n", "value = 5000.5\n").replace("value = 15000\n", "value = 15000\nvalue = extra\n")
    diff = build_diff(old, new, "data.py")
    assert (diff.added, diff.removed, len(hunks(diff))) == (2, 1, 2)
    assert not diff.is_large
    html = render(env, diff, body_url="/d")
    assert len(html) < 100_000
    assert len(soup(html).select("tbody.d-hunk tr")) == 8 + 7
    rows = gap_rows(diff, 100, 140)
    assert [(r.old_no, r.new_no, r.kind) for r in rows[:2]] == [(100, 100, "ctx"), (101, 101, "ctx")]
    assert len(rows) == 41 and code_text(soup(rows[-1].html)) == "value = 140"
    after_insert = gap_rows(diff, 15_010, 15_011)
    assert [(r.old_no, r.new_no) for r in after_insert] == [(15_009, 15_010), (15_010, 15_011)]
    assert build_diff(old, new, "data.py") is diff  # the lazy request finds what the page was built from


def test_gap_rows_block_returns_a_chunk_and_the_rest_stays_lazy(env: Environment) -> None:
    old = numbered(20_000)
    diff = build_diff(old, old.replace("line 10000\n", "line ten thousand\n"), "big.txt")
    middle = gaps(diff)[0]
    assert (middle.start, middle.end) == (1, 9996)
    expansion = expand_gap(diff, middle.start, middle.end)
    assert len(expansion.rows) == CHUNK and expansion.rows[-1].new_no == 9996
    assert expansion.before is not None and (expansion.before.start, expansion.before.end) == (1, 9996 - CHUNK)
    context = {"diff": diff, "diff_id": "diff-1", "body_url": "/d", "diff_mode": "unified"}
    html = Renderer(env).block("_diff.html", "gap_rows", gap_start=10_004, gap_end=20_000, **context)
    page = soup(html)
    assert page.select_one("tbody.d-expanded tr td.d-num").get_text() == "10004"
    assert len(page.select("tbody.d-expanded tr")) == CHUNK
    assert page.select_one("tbody.d-gap button")["hx-get"] == f"/d?gap={10_004 + CHUNK}-20000"
    split = soup(
        Renderer(env).block("_diff.html", "gap_rows", gap_start=5, gap_end=6, **{**context, "diff_mode": "split"})
    )
    assert [len(tr.select("td")) for tr in split.select("tr")] == [4, 4]


def test_big_new_file_renders_collapsed_and_loads_its_body_lazily(env: Environment) -> None:
    diff = build_diff(None, numbered(20_000), "huge.txt")
    assert diff.is_large
    html = render(env, diff, body_url="/d")
    page = soup(html)
    details = page.select_one("details.diff")
    assert not details.has_attr("open") and len(html) < 5_000
    assert (details["hx-get"], details["hx-trigger"], details["hx-swap"]) == ("/d", "toggle once", "outerHTML")
    assert not page.select("tr") and page.select_one(".d-body.d-loading") is not None
    body = soup(
        Renderer(env).block("_diff.html", "diff_body", diff=diff, diff_id="diff-1", body_url="/d", expanded=True)
    )
    assert len(body.select("tbody.d-lines tr")) == FILE_WINDOW
    assert body.select_one(".d-gap button")["hx-get"] == f"/d?gap={FILE_WINDOW + 1}-20000"
    more = soup(
        Renderer(env).block(
            "_diff.html", "gap_rows", diff=diff, diff_id="diff-1", body_url="/d", gap_start=1001, gap_end=20_000
        )
    )
    assert more.select_one("tr td.d-num").get_text() == "1001" and len(more.select("tbody.d-lines tr")) == CHUNK


def test_large_diff_without_a_url_still_renders_its_body_collapsed(env: Environment) -> None:
    diff = build_diff(numbered(500), numbered(500, "row"), "all.txt")
    assert diff.is_large and (diff.added, diff.removed) == (500, 500)
    page = soup(render(env, diff))
    assert not page.select_one("details.diff").has_attr("open") and len(page.select("tr.d-add")) == 500


# -- file views -------------------------------------------------------------------------------------


def test_file_view_marks_the_target_line(env: Environment) -> None:
    view = file_view("a = 1\nb = 2\nc = 3\n", "m.py", target_line=2)
    assert (view.language, view.total_lines, view.before, view.after) == ("Python", 3, None, None)
    html = env.get_template("_file_view.html").render(view=view, view_id="panel-file", path="m.py")
    target = soup(html).select_one("tr.target")
    assert target is not None and target["id"] == "panel-file-target" and target.select_one(".d-num").get_text() == "2"


def test_long_file_view_shows_a_window_around_the_target(env: Environment) -> None:
    view = file_view(numbered(20_000), "long.txt", target_line=12_000)
    assert len(view.lines) == FILE_WINDOW and any(line.target and line.no == 12_000 for line in view.lines)
    assert view.before is not None and view.after is not None
    assert view.before.end + 1 == view.lines[0].no and view.after.start - 1 == view.lines[-1].no
    above = expand_file(view, view.before.start, view.before.end)
    assert above.rows[-1].no == view.before.end and above.before is not None
    html = env.get_template("_file_view.html").render(view=view, view_id="p", lines_url="/f?path=long.txt")
    buttons = [b["hx-get"] for b in soup(html).select(".d-gap button")]
    assert buttons == [f"/f?path=long.txt&gap=1-{view.before.end}", f"/f?path=long.txt&gap={view.after.start}-20000"]
    lines = Renderer(env).block("_file_view.html", "file_lines", view=view, view_id="p", gap_start=1, gap_end=3)
    assert [td.get_text() for td in soup(lines).select(".d-num")] == ["1", "2", "3"]


def test_language_comes_from_the_file_name() -> None:
    names = {
        "a.py": "Python",
        "web/app.js": "JavaScript",
        "Makefile": "Makefile",
        "x.unknownext": None,
        "notes.txt": None,
    }
    assert {name: build_diff(None, "x\n", name).language for name in names} == names


# -- odd and hostile input --------------------------------------------------------------------------


def test_text_decoded_from_another_encoding_renders(env: Environment) -> None:
    old = "caf\xe9 = 1\n".encode("latin-1").decode("latin-1")
    new = "caf\ufffd = 1\nna\xefve = '\x00\x1b[31m'\n"
    diff = build_diff(old, new, "legacy.py")
    text = soup(render(env, diff)).get_text()
    assert "café = 1" in text and "caf\ufffd = 1" in text and "naïve" in text
    broken = build_diff("ok\n", "bad \udce9 byte\n", "s.txt")  # a lone surrogate cannot reach the browser
    render(env, broken).encode("utf-8")


HOSTILE = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "' onmouseover='alert(1)"]


@pytest.mark.parametrize("mode", ["unified", "split"])
def test_agent_text_in_paths_and_content_is_escaped(env: Environment, mode: str) -> None:
    text = "".join(f"{bad}\n" for bad in HOSTILE)
    path = f"{HOSTILE[1]}/{HOSTILE[0]}.html"
    pages = [
        render(env, build_diff(text, text + "x\n" + text, path), diff_mode=mode, body_url="/d"),
        render(env, build_diff(None, text, path), diff_mode=mode),
        render(env, build_diff(text, None, path), diff_mode=mode),
        env.get_template("_file_view.html").render(view=file_view(text, path, 2), view_id="v"),
    ]
    for html in pages:
        page = soup(html)
        assert not page.select("script, img")
        for element in page.find_all(True):
            assert not [name for name in element.attrs if name.lower().startswith("on")], element
        assert HOSTILE[0] in page.get_text()
    assert soup(pages[0]).select_one("details.diff")["data-path"] == path


def test_parse_gap_accepts_only_a_line_range() -> None:
    assert parse_gap("12-40") == (12, 40)
    for bad in ["", "12", "40-12", "0-3", "1-2-3", "a-b", "1 -2"]:
        with pytest.raises(ValueError):
            parse_gap(bad)
