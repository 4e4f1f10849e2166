"""Tests for webclient.render.git_patch: a v2 diff's git patch as files and hunks of the rows every diff is drawn with;
the agent's lines escaped, binary files and unusual headers shown sensibly, a long patch cut."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.support.html import parse, squash
from webclient.render import git_patch as module
from webclient.render.git_patch import git_patch
from webclient.render.rendering import Renderer
from webclient.viewmodel.content import DiffChanges, FileOperation

PATCH = """diff --git a/src/app.py b/src/app.py
index 83db48f..bf269f4 100644
--- a/src/app.py
+++ b/src/app.py
@@ -10,4 +10,4 @@ def main():
 keep = 1
-old = "<b>"
+new = "<script>"
--- not a header: a deleted line that starts with two dashes
\\ No newline at end of file
@@ -40 +40,2 @@
 tail
+added
diff --git a/logo.png b/logo.png
new file mode 100644
Binary files /dev/null and b/logo.png differ
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
"""


def test_files_hunks_and_line_numbers() -> None:
    app, logo, gone = git_patch(PATCH)
    assert (app.path, app.added, app.removed, app.binary) == ("src/app.py", 2, 2, False)
    first, second = app.hunks
    assert first.header.startswith("@@ -10,4 +10,4 @@")
    assert [(r.kind, r.old_no, r.new_no) for r in first.rows] == [
        ("ctx", 10, 10),
        ("del", 11, None),
        ("add", None, 11),
        ("del", 12, None),
    ]
    assert first.rows[-1].no_newline
    assert [(r.kind, r.old_no, r.new_no) for r in second.rows] == [("ctx", 40, 40), ("add", None, 41)]
    assert (logo.path, logo.binary, logo.hunks) == ("logo.png", True, [])
    assert gone.path == "gone.txt" and [r.kind for r in gone.hunks[0].rows] == ["del"]


def test_lines_are_escaped_text() -> None:
    (app, *_) = git_patch(PATCH)
    rows = app.hunks[0].rows
    # Highlighted by the file's language (Python here), the agent's text escaped.
    assert str(rows[1].html) == (
        '<span class="hl-n">old</span> <span class="hl-o">=</span> <span class="hl-s2">&#34;&lt;b&gt;&#34;</span>'
    )
    assert "<script>" not in "".join(str(r.html) for h in app.hunks for r in h.rows)


def test_text_that_is_not_a_patch_and_a_long_patch() -> None:
    (only,) = git_patch("just some words\n+ and a plus")
    assert only.path == "(patch)" and only.hunks == []
    assert git_patch("") == []
    long = "diff --git a/x b/x\n@@ -1,9000 +1,9000 @@\n" + " same\n" * 9000
    (x,) = git_patch(long)
    assert x.cut and sum(len(h.rows) for h in x.hunks) == module.MAX_ROWS


def render_changes(item: DiffChanges, mode: str) -> str:
    session = SimpleNamespace(display_path=lambda path: path.removeprefix("/work/"))  # the workspace-relative path
    return Renderer().page("_diff_changes.html", item=item, session=session, diff_mode=mode)


@pytest.mark.parametrize("mode", ["unified", "split"])
def test_a_v2_diff_shows_its_files_and_its_patch_in_the_users_layout(mode: str) -> None:
    changes = (
        FileOperation("move", "/work/new.py", "/work/old.py"),
        FileOperation("_chmod", "/work/<b>run.sh"),
        FileOperation("add", "/work/logo.png", file_type="binary", mime_type="image/png"),
    )
    page = parse(render_changes(DiffChanges(changes, "git_patch", PATCH), mode))
    text = squash(page.text)
    for part in ("Moved old.py → new.py", "Chmod <b>run.sh", "Added logo.png binary image/png", "Binary file"):
        assert squash(part) in text, part
    assert not [e for e in page.elements if e.tag == "b" or e.tag == "script"]
    table = next(e for e in page.elements if e.tag == "table")
    assert table.attrs["class"] == f"d-table d-{mode}"
    cells = [e for e in page.elements if e.tag in ("tr", "td") and "d-add" in (e.attrs.get("class") or "").split()]
    assert cells  # the added lines, drawn as diff rows


def test_a_patch_in_another_format_shows_as_its_text() -> None:
    html = render_changes(DiffChanges((), "_svn", "Index: <x>"), "unified")
    assert "A patch in the format" in html and "_svn" in html and "Index: &lt;x&gt;" in html


def test_odd_characters_in_lines_do_not_shift_the_highlighting() -> None:
    patch = "diff --git a/x.py b/x.py\n@@ -1,3 +1,3 @@\n a = 1\x0c\n-b = 2\r\n+b = 3\n c = 4\n"
    rows = git_patch(patch)[0].hunks[0].rows
    assert [(r.kind, r.old_no, r.new_no) for r in rows] == [
        ("ctx", 1, 1),
        ("del", 2, None),
        ("add", None, 2),
        ("ctx", 3, 3),
    ]
    assert all('class="hl-' in str(r.html) for r in rows)  # every line highlighted, none fell back to plain
