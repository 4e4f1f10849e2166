"""Tests for webclient.render.export: a thread built through the Thread API, written as Markdown and read back.

The Markdown is parsed with markdown-it-py (CommonMark, raw HTML on, as most readers of an exported file
have it), so the tests check the structure a reader sees, not the exact spelling.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from webclient.acp.agent import AcpAgent
from webclient.render.export import (
    ExportHeader,
    code_span,
    export_filename,
    fence,
    session_markdown,
    thread_markdown,
    unified_diff,
)
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.session.core import Session
from webclient.viewmodel.by import By
from webclient.viewmodel.content import (
    AudioBlock,
    Diff,
    EmbeddedResource,
    ImageBlock,
    Location,
    PermissionOption,
    PlanItem,
    ResourceLink,
    TerminalRef,
    TextBlock,
    Unknown,
)
from webclient.viewmodel.entries import RuleNote
from webclient.viewmodel.thread import Thread

MD = MarkdownIt("commonmark")
OPTIONS = [
    PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
]
BACKTICKY = "a ` b `` c\n```\nnot a fence end\n````\n`````python\nend ```"


def parse(markdown: str) -> list[Token]:
    return MD.parse(markdown)


def fences(markdown: str) -> list[tuple[str, str]]:
    """(info, content) of every fenced code block, at any depth."""
    return [(token.info, token.content) for token in parse(markdown) if token.type == "fence"]


def paragraphs(markdown: str) -> list[str]:
    """The source text of every inline run (paragraph, heading, list item), in order."""
    return [token.content for token in parse(markdown) if token.type == "inline"]


def headings(markdown: str) -> list[tuple[str, str]]:
    tokens = parse(markdown)
    return [(tokens[i].tag, tokens[i + 1].content) for i, token in enumerate(tokens) if token.type == "heading_open"]


def index_of(items: list[str], needle: str) -> int:
    return next(i for i, item in enumerate(items) if needle in item)


def text_call(thread: Thread, call_id: str, **patch: Any) -> None:
    thread.upsert_tool_call(call_id, patch, {})


# -- the document --------------------------------------------------------------------------------


def test_thread_markdown_keeps_entry_order_under_speaker_headings() -> None:
    thread = Thread()
    thread.start_turn([TextBlock(text="First question")])
    thread.append_message("agent-message", TextBlock(text="First answer"))
    text_call(thread, "c1", title="Read notes", kind="read", status="completed")
    thread.add_notice("info", "Turn ended")
    thread.start_turn([TextBlock(text="Second question")])
    thread.append_message("agent-message", TextBlock(text="Second answer"))
    header = ExportHeader(title="My session", agent_name="Demo agent", agent_version="1.2.3", workspace="/ws")

    markdown = thread_markdown(thread, header)

    assert headings(markdown) == [
        ("h1", "My session"),
        ("h2", "You"),
        ("h2", "Demo agent"),
        ("h2", "You"),
        ("h2", "Demo agent"),
    ]
    runs = paragraphs(markdown)
    order = ["First question", "First answer", "Read notes", "Turn ended", "Second question", "Second answer"]
    positions = [index_of(runs, needle) for needle in order]
    assert positions == sorted(positions)
    assert "Agent: Demo agent 1.2.3" in runs and "Workspace: `/ws`" in runs
    assert markdown.endswith("\n") and not markdown.endswith("\n\n")


def test_thread_markdown_of_an_empty_thread_has_a_default_title() -> None:
    markdown = thread_markdown(Thread())
    assert headings(markdown) == [("h1", "Agent session")]


def test_thread_markdown_shows_the_start_time_in_utc() -> None:
    markdown = thread_markdown(Thread(), ExportHeader(started=86_400 * 365))
    assert "- Started: 1971-01-01 00:00 UTC" in markdown


def test_thread_markdown_escapes_plain_text_the_page_shows_as_text() -> None:
    thread = Thread()
    text_call(thread, "c1", title="Edit <App> *now*\nsecond line", kind="edit", status="completed")
    markdown = thread_markdown(thread, ExportHeader(title="# [not](a link) `x`"))
    html = MD.render(markdown)
    assert "<h1># [not](a link) `x`</h1>" in html
    assert "Edit &lt;App&gt; *now* second line" in html


def test_agent_message_is_markdown_verbatim() -> None:
    thread = Thread()
    thread.append_message("agent-message", TextBlock(text="Use **bold** and\n\n```python\nprint('hi')\n```"))
    markdown = thread_markdown(thread)
    assert "Use **bold** and" in markdown
    assert fences(markdown) == [("python", "print('hi')\n")]


def test_unclosed_fence_in_agent_message_does_not_swallow_what_follows() -> None:
    thread = Thread()
    thread.append_message("agent-message", TextBlock(text="Start:\n\n````js\nconst a = 1;\n```"))
    thread.add_notice("error", "Agent crashed")
    markdown = thread_markdown(thread)
    assert fences(markdown) == [("js", "const a = 1;\n```\n")]
    assert any(token.type == "blockquote_open" for token in parse(markdown))
    assert "**Error:** Agent crashed" in paragraphs(markdown)


def test_unclosed_html_block_in_agent_message_is_closed() -> None:
    for text, end in [("<pre>\nraw", "</pre>"), ("<SCRIPT>\nx = 1", "</script>"), ("<!-- note\n\nmore", "-->")]:
        thread = Thread()
        thread.append_message("agent-message", TextBlock(text=text))
        thread.add_notice("info", "After")
        markdown = thread_markdown(thread)
        assert f"{text}\n{end}" in markdown
        assert any(token.type == "blockquote_open" for token in parse(markdown)), text


def test_thought_is_folded_in_details() -> None:
    thread = Thread()
    thread.append_message("thought", TextBlock(text="Maybe the *cache* is stale"))
    thread.append_message("agent-message", TextBlock(text="Found it."))
    markdown = thread_markdown(thread)
    tokens = parse(markdown)
    html_blocks = [token.content for token in tokens if token.type == "html_block"]
    assert html_blocks[0].startswith("<details>\n<summary>Thinking</summary>")
    assert html_blocks[1].strip() == "</details>"
    runs = paragraphs(markdown)
    assert index_of(runs, "Maybe the *cache* is stale") < index_of(runs, "Found it.")


def test_thought_keeps_leading_indentation() -> None:
    thread = Thread()
    thread.append_message("thought", TextBlock(text="    <pre>indented code"))
    markdown = thread_markdown(thread)
    assert [token.content for token in parse(markdown) if token.type == "code_block"] == ["<pre>indented code\n"]


def test_user_message_attachments_never_dump_base64() -> None:
    thread = Thread()
    image = ImageBlock(mime_type="image/png", data="iVBORw0KGgoAAAANSUhEUg" * 50)
    audio = AudioBlock(mime_type="audio/wav", data="UklGRiQAAABXQVZF" * 50)
    thread.start_turn(
        [
            TextBlock(text="Look"),
            image,
            audio,
            ImageBlock(mime_type="image/png", data=None, uri="https://example.com/x.png"),
        ]
    )
    markdown = thread_markdown(thread)
    assert "iVBORw0KGgo" not in markdown and "UklGRi" not in markdown
    assert "Image (image/png), not included." in markdown
    assert "Audio clip (audio/wav), not included." in markdown
    links = [token for token in parse(markdown) if token.type == "inline" for token in token.children or []]
    assert [t.attrGet("href") for t in links if t.type == "link_open"] == ["https://example.com/x.png"]


def test_resource_links_are_links_only_on_the_web() -> None:
    thread = Thread()
    thread.start_turn(
        [
            ResourceLink(uri="https://example.com/a b(c)", name="Docs [v2]", description="the manual"),
            ResourceLink(uri="file:///ws/main.py", name="main.py"),
            ResourceLink(uri="javascript:alert(1)", name="bad"),
        ]
    )
    markdown = thread_markdown(thread)
    html = MD.render(markdown)
    assert '<a href="https://example.com/a%20b%28c%29">Docs [v2]</a> — the manual' in html
    assert "main.py <code>file:///ws/main.py</code>" in html
    assert "bad <code>javascript:alert(1)</code>" in html and 'href="javascript' not in html


def test_embedded_resource_text_is_fenced_with_its_language() -> None:
    thread = Thread()
    thread.start_turn(
        [
            EmbeddedResource(uri="file:///ws/app.py", mime_type="text/x-python", text="def f():\n    return 1\n"),
            EmbeddedResource(uri="mem://notes", mime_type="application/json", text='{"a": 1}'),
            EmbeddedResource(uri="file:///ws/logo.png", mime_type="image/png", blob="AAAA" * 100),
        ]
    )
    markdown = thread_markdown(thread)
    assert fences(markdown) == [("python", "def f():\n    return 1\n"), ("json", '{"a": 1}\n')]
    assert "AAAAAAAA" not in markdown and "Binary contents (image/png), not included." in markdown


# -- fences --------------------------------------------------------------------------------------


def test_backtick_heavy_content_stays_inside_its_fence() -> None:
    thread = Thread()
    thread.start_turn([EmbeddedResource(uri="file:///ws/README.md", text=BACKTICKY)])
    text_call(
        thread,
        "c1",
        title="Edit",
        kind="edit",
        status="completed",
        content=[Diff(path="/ws/x.md", old_text="```\n", new_text=BACKTICKY)],
    )
    thread.terminals.output("t1", BACKTICKY.replace("\n", "\r\n").encode())
    text_call(thread, "c2", title="Run", kind="execute", status="completed", content=[TerminalRef(terminal_id="t1")])
    thread.add_notice("error", "Failed", BACKTICKY)
    thread.append_message("agent-message", TextBlock(text="after all of it"))

    markdown = thread_markdown(thread)

    blocks = fences(markdown)
    assert blocks[0] == ("markdown", BACKTICKY + "\n")
    assert blocks[1][0] == "diff" and blocks[1][1] == unified_diff("```\n", BACKTICKY, "/ws/x.md")
    assert blocks[2] == ("console", BACKTICKY + "\n")
    assert blocks[3] == ("", BACKTICKY + "\n")
    assert len(blocks) == 4
    assert paragraphs(markdown)[-1] == "after all of it"


def test_fence_round_trips_any_content() -> None:
    for content in ["", "plain", "```", "x\n````\ny", "`" * 10, "ends with newline\n", "tab\tand ~~~ tildes\n~~~"]:
        [block] = fences(fence(content, "text"))
        assert block == ("text", content if content.endswith("\n") or not content else content + "\n")


def test_fence_info_string_drops_unsafe_characters() -> None:
    assert fence("x", "py`thon {.x}").startswith("```python.x\n")


def test_code_span_round_trips_backticks() -> None:
    for text in ["a", "a`b", "``x``", "`start", "end`", " spaced ", " "]:
        [inline] = [token for token in parse(f"x {code_span(text)} y") if token.type == "inline"]
        [code] = [child for child in inline.children or [] if child.type == "code_inline"]
        assert code.content == text
    assert code_span("") == ""
    assert code_span("two\nlines") == "`two lines`"


# -- tool calls ----------------------------------------------------------------------------------


def test_tool_call_line_has_kind_title_status_and_locations() -> None:
    thread = Thread()
    text_call(
        thread,
        "c1",
        title="Read config",
        kind="read",
        status="completed",
        locations=[Location(path="/ws/config.toml", line=12), Location(path="/elsewhere/x.py")],
    )
    header = ExportHeader(display_path=lambda path: path.removeprefix("/ws/"))
    markdown = thread_markdown(thread, header)
    assert "**Read:** Read config — *Done*" in markdown
    assert "- `config.toml:12`\n- `/elsewhere/x.py`" in markdown


def test_tool_call_with_nothing_set_still_exports() -> None:
    thread = Thread()
    text_call(thread, "c1")
    thread.upsert_tool_call("c2", {"title": None, "kind": "custom_kind", "status": "weird_state", "content": None}, {})
    markdown = thread_markdown(thread)
    assert "**Tool:** Tool call — *Pending*" in markdown
    assert "**Tool:** Tool call — *Weird state*" in markdown


def test_tool_call_text_content_and_raw_input_output() -> None:
    thread = Thread()
    circular: dict[str, Any] = {}
    circular["self"] = circular
    text_call(
        thread,
        "c1",
        title="Search",
        kind="search",
        status="completed",
        content=[TextBlock(text="Found **3** matches"), Unknown(kind="hologram", raw={"type": "hologram", "n": 1})],
        raw_input={"pattern": "todo", "path": "ünïcode"},
        raw_output=circular,
    )
    markdown = thread_markdown(thread)
    assert "Found **3** matches" in markdown
    assert "*Content of type `hologram`:*" in markdown
    blocks = fences(markdown)
    assert ("json", '{\n  "type": "hologram",\n  "n": 1\n}\n') in blocks
    assert ("json", '{\n  "pattern": "todo",\n  "path": "ünïcode"\n}\n') in blocks
    assert any(info == "json" and "'self'" in content for info, content in blocks)
    assert "<summary>Input</summary>" in markdown and "<summary>Output</summary>" in markdown


def test_diff_content_is_a_unified_diff_with_the_path() -> None:
    thread = Thread()
    diff = Diff(path="/ws/src/app.py", old_text="a = 1\nb = 2\nc = 3\n", new_text="a = 1\nb = 20\nc = 3\n")
    text_call(thread, "c1", title="Edit app.py", kind="edit", status="completed", content=[diff])
    markdown = thread_markdown(thread, ExportHeader(display_path=lambda path: path.removeprefix("/ws/")))
    [(info, body)] = fences(markdown)
    assert info == "diff"
    assert body == "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n"
    assert "Diff of `src/app.py`:" in markdown


def test_unified_diff_of_new_file_and_missing_final_newline() -> None:
    assert unified_diff(None, "one\ntwo", "new.txt") == (
        "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of file\n"
    )
    assert unified_diff("same\n", "same\n", "x") == ""


def test_unchanged_diff_and_empty_new_file_say_so() -> None:
    thread = Thread()
    text_call(
        thread,
        "c1",
        content=[Diff(path="x", old_text="same", new_text="same"), Diff(path="y", old_text=None, new_text="")],
    )
    markdown = thread_markdown(thread)
    assert "*(no changes)*" in markdown and "*(an empty file)*" in markdown and fences(markdown) == []


def test_terminal_is_a_console_block_with_command_output_and_exit_status() -> None:
    thread = Thread()
    text_call(
        thread, "c1", title="Run tests", kind="execute", status="in_progress", content=[TerminalRef(terminal_id="t1")]
    )
    thread.terminals.started("t1", "pytest -q", "/ws/pkg")
    thread.terminals.output("t1", b"\x1b[32m..\x1b[0mF\r\n1 failed, 2 passed\r\n")
    thread.terminals.exited("t1", 1, None)
    markdown = thread_markdown(thread, ExportHeader(display_path=lambda path: path.removeprefix("/ws/")))
    assert fences(markdown) == [("console", "$ pytest -q\n..F\n1 failed, 2 passed\n")]
    assert "Ran in `pkg`. Exit status 1." in markdown


def test_terminal_states_running_killed_and_unknown() -> None:
    thread = Thread()
    thread.terminals.output("t1", b"working")
    thread.terminals.started("t2", "sleep 100", None)
    thread.terminals.exited("t2", None, "SIGKILL")
    refs = [TerminalRef(terminal_id="t1"), TerminalRef(terminal_id="t2"), TerminalRef(terminal_id="nope")]
    text_call(thread, "c1", content=refs)
    markdown = thread_markdown(thread)
    assert fences(markdown) == [("console", "working\n"), ("console", "$ sleep 100\n")]
    assert "Still running when exported." in markdown
    assert "Killed by signal SIGKILL." in markdown
    assert "Terminal `nope`: no output." in markdown


def test_permission_shows_the_chosen_answer() -> None:
    thread = Thread()
    chosen = thread.upsert_tool_call("c1", {"title": "Delete build/"}, {})
    thread.ask_permission(chosen, "r1", OPTIONS)
    thread.answer_permission("r1", "allow")
    stopped = thread.upsert_tool_call("c2", {"title": "Push"}, {})
    thread.ask_permission(stopped, "r2", OPTIONS)
    thread.answer_permission("r2", None)
    waiting = thread.upsert_tool_call("c3", {"title": "Deploy"}, {})
    thread.ask_permission(waiting, "r3", OPTIONS)
    markdown = thread_markdown(thread)
    assert "**Permission:** you chose **Allow once** (offered: Allow once, Reject)." in markdown
    assert "**Permission:** not answered, the turn was stopped (offered: Allow once, Reject)." in markdown
    assert "**Permission:** waiting for an answer (offered: Allow once, Reject)." in markdown


def test_a_teams_export_names_who_prompted_and_answered_and_which_rule_did() -> None:
    thread = Thread()
    thread.start_turn([TextBlock(text="tidy up")]).by = By("bob", "Bob <Baker>", 1_700_000_000.0)
    by_bob = thread.upsert_tool_call("c1", {"title": "Delete build/"}, {})
    thread.ask_permission(by_bob, "r1", OPTIONS)
    answered = thread.answer_permission("r1", "allow")
    assert answered is not None
    answered.by = By("bob", "Bob <Baker>", 1_700_000_000.0)
    by_rule = thread.upsert_tool_call("c2", {"title": "Edit a.py"}, {})
    thread.ask_permission(by_rule, "r2", OPTIONS)
    ruled = thread.answer_permission("r2", "allow")
    assert ruled is not None
    ruled.rule = RuleNote(rule_id=3, decision="allow", what="edit src/*")
    markdown = thread_markdown(thread)
    assert "## Bob \\<Baker\\>" in markdown and "## You" not in markdown
    assert "**Permission:** Bob \\<Baker\\> (22:13 UTC) chose **Allow once**" in markdown
    assert "**Permission:** rule 3 (edit src/\\*) chose **Allow once**" in markdown


# -- plans, file changes, notices ----------------------------------------------------------------


def test_plan_is_a_task_list_with_progress_marked() -> None:
    thread = Thread()
    thread.set_plan(
        [
            PlanItem(content="Read the code", priority="high", status="completed"),
            PlanItem(content="Fix [the] bug", priority="medium", status="in_progress"),
            PlanItem(content="", priority="low", status="pending"),
        ]
    )
    markdown = thread_markdown(thread)
    assert "**Plan** (1 of 3 done)" in markdown
    assert "- [x] Read the code\n- [ ] Fix \\[the\\] bug *(in progress)*\n- [ ] (empty)" in markdown
    items = [token for token in parse(markdown) if token.type == "list_item_open"]
    assert len(items) == 3


def test_file_change_is_a_diff() -> None:
    thread = Thread()
    thread.add_file_change("notes/todo.md", None, "- one\n")
    thread.add_file_change("notes/todo.md", "- one\n", "- one\n- two\n")
    markdown = thread_markdown(thread)
    assert "The agent created `notes/todo.md`:" in markdown and "The agent wrote `notes/todo.md`:" in markdown
    assert [body.splitlines()[0] for _, body in fences(markdown)] == ["--- /dev/null", "--- a/notes/todo.md"]
    assert fences(markdown)[1][1].endswith(" - one\n+- two\n")


def test_notice_detail_with_lone_carriage_returns_stays_quoted() -> None:
    thread = Thread()
    thread.add_notice("error", "Crash", "progress 10%\rprogress 100%\r```")
    thread.append_message("agent-message", TextBlock(text="after"))
    markdown = thread_markdown(thread)
    assert fences(markdown) == [("", "progress 10%\nprogress 100%\n```\n")]
    assert paragraphs(markdown)[-1] == "after"


def test_notice_is_a_blockquote_with_its_detail() -> None:
    thread = Thread()
    thread.add_notice("warning", "Agent stderr", "line 1\n\nline 3")
    thread.add_notice("info", "Stopped")
    markdown = thread_markdown(thread)
    assert "> **Warning:** Agent stderr\n>\n> ```\n> line 1\n>\n> line 3\n> ```" in markdown
    assert "> **Note:** Stopped" in markdown
    assert fences(markdown) == [("", "line 1\n\nline 3\n")]


def test_unicode_survives() -> None:
    thread = Thread()
    thread.start_turn([TextBlock(text="Übersetze: 日本語 🚀")])
    thread.append_message("agent-message", TextBlock(text="Fertig — ✓ 完了"))
    thread.set_plan([PlanItem(content="Prüfen ✨", priority="high", status="pending")])
    markdown = thread_markdown(thread, ExportHeader(title="Ünïcödé 🚀 session"))
    assert headings(markdown)[0] == ("h1", "Ünïcödé 🚀 session")
    assert "Übersetze: 日本語 🚀" in markdown and "Fertig — ✓ 完了" in markdown and "- [ ] Prüfen ✨" in markdown


# -- sessions and file names ---------------------------------------------------------------------


def test_session_markdown_uses_the_session_header(tmp_path: Path) -> None:
    session = Session(AgentSpec(AgentEntry("agent", [sys.executable, "-c", "pass"]), tmp_path), AcpAgent)
    session.lifecycle.agent_info = {"name": "demo-agent", "title": "Demo agent", "version": "0.3"}
    text_call(
        session.thread, "c1", title="Read", kind="read", locations=[Location(path=str(tmp_path / "src" / "a.py"))]
    )
    markdown = session_markdown(session)
    assert headings(markdown)[0] == ("h1", "Demo agent")
    assert "- Agent: Demo agent 0.3" in markdown and f"- Workspace: `{tmp_path}`" in markdown
    assert "- `src/a.py`" in markdown


def test_export_filename_is_a_safe_ascii_slug() -> None:
    assert export_filename("Fix the parser") == "fix-the-parser.md"
    assert export_filename('Crème brûlée: "a/b\\c" <d>|e?*') == "creme-brulee-a-b-c-d-e.md"
    assert export_filename("../../etc/passwd") == "etc-passwd.md"
    assert export_filename(None) == "session.md"
    assert export_filename("") == "session.md"
    assert export_filename("日本語 🚀") == "session.md"
    assert export_filename("CON") == "con-session.md"
    long = export_filename("word " * 100)
    assert len(long) <= 83 and long.endswith(".md") and not long.endswith("-.md")
    assert all(c.isascii() and (c.isalnum() or c in "-.") for c in long)


def test_odd_content_never_raises_and_encodes_as_utf8() -> None:
    odd = ["", " ", "\r", "\x00", "\ud800 lone surrogate", "```", "<details>", "</details>", "-->", "\\", "*" * 50]
    thread = Thread()
    for i, text in enumerate(odd):
        thread.start_turn(
            [TextBlock(text=text), ResourceLink(uri=text, name=text), EmbeddedResource(uri=text, text=text)]
        )
        thread.append_message("thought", TextBlock(text=text))
        thread.append_message("agent-message", TextBlock(text=text))
        thread.upsert_tool_call(
            f"c{i}",
            {
                "title": text,
                "kind": text,
                "status": text,
                "raw_input": {text: text},
                "content": [Diff(path=text, old_text=text, new_text=text + "x")],
            },
            {},
        )
        thread.terminals.started(f"c{i}", text, text)
        thread.set_plan([PlanItem(content=text, priority=text, status=text)])
        thread.add_notice("error", text, text)
        thread.add_file_change(text, text, text)
    markdown = thread_markdown(thread, ExportHeader(title=odd[4], agent_name=odd[3], workspace=odd[2]))
    markdown.encode("utf-8")
    assert "\ufffd lone surrogate" in markdown
    assert len(headings(markdown)) == 1 + 2 * len(odd)
