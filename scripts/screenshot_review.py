"""Take the README's screenshots of reviewing what an agent did, each made again from a real server:
``review-light`` (Changes on a file the demo agent edited twice: its first change undone, the other two with Keep and
Undo), ``checkpoints-dark`` (three prompts done; the second's "Restore files to before this" opened with its preview
and Edit and resend), ``worktree-light`` (a session in a worktree of a git repository: its branch in the header, the
Branch panel's diff and Commit) and ``mcp-light`` (a session's MCP servers in its header, one left out with why, and
the agent's answer from the server's tool). docs/images/NAME.png, 1280 wide, in the theme the name says.

Run from the repository's root, with Chromium installed (``scripts/ensure-chromium``) and the test agents' node
modules (``npm ci`` in tests/agents/ts, for ``mcp-light``): ``python scripts/screenshot_review.py [NAME ...]`` takes
all of them, or only those named. Each starts a server of its own; the folders it works in are short ones under a
temporary folder, so that the header reads as a person's would.
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import Browser, expect  # noqa: E402
from screenshot_readme import new_page, open_session, run_prompts, save, send, take  # noqa: E402

from demo_agent import SAMPLE_WORKSPACE  # noqa: E402
from tests.support.servers import (  # noqa: E402
    Server,
    free_port,
    launch_server,
    stop_server,
)
from tests.support.ts_agents import NODE_MODULES, TS_AGENTS, node  # noqa: E402

EVERYTHING = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
GIT = ["git", "-c", "user.name=Ada Lovelace", "-c", "user.email=ada@example.com", "-c", "init.defaultBranch=main"]


@contextlib.contextmanager
def server_in(
    workspace_name: str, options: list[str], env: dict[str, str], prepare: Callable[[Path], None]
) -> Iterator[tuple[Server, Path]]:
    """A server started with OPTIONS and ENV to work in a folder named ``workspace_name`` (a short path under a
    temporary folder, ``prepare``d first), both gone at the end."""
    folder = Path(tempfile.mkdtemp(prefix="shot-"))
    workspace = folder / workspace_name
    workspace.mkdir()
    prepare(workspace)
    env = {"WEBCLIENT_DATA_DIR": str(folder / "data"), **env}  # its worktrees under it: a short path too
    options = [*options, "--workspace", str(workspace)]
    server = launch_server(
        free_port(), secrets.token_urlsafe(16), folder / "rec.jsonl", workspace, options, env, subprocess.PIPE
    )
    try:
        yield server, workspace
    finally:
        if server.process is not None and server.process.poll() is None:
            stop_server(server)
        shutil.rmtree(folder, ignore_errors=True)


AVERAGE = '''

def average(values: list[float]) -> float:
    """Return the mean of ``values``; an empty list has none."""
    if not values:
        raise ValueError("no values to average")
    return sum(values) / len(values)
'''


def sample_project(folder: Path) -> None:
    """The demo agent's sample project in ``folder``, with one function more between ``divide()`` and the class:
    so that the agent's edits of the two are two changes, not one."""
    shutil.copytree(SAMPLE_WORKSPACE, folder, dirs_exist_ok=True)
    calculator = folder / "src" / "calculator.py"
    text = calculator.read_text()
    calculator.write_text(text.replace("    return a / b\n", "    return a / b\n" + AVERAGE, 1))


def review_light(browser: Browser) -> None:
    """``edit`` twice: the demo agent makes ``divide()`` raise a clear error, then adds ``power()`` and its operator
    (asking each time, allowed); Changes on src/calculator.py, its three changes, the first one undone."""
    with server_in("calculator", [], {"DEMO_AGENT_SPEED": "0"}, sample_project) as (server, _workspace):
        page = new_page(browser, "light", height=900)
        open_session(page, server)
        run_prompts(page, ["edit divide() to fail clearly on zero", "edit add power() to the calculator"])
        page.click('[data-action="show-changes"]')
        page.click('.change-list a:has-text("calculator.py")')
        hunks = page.locator('[data-role="review-hunk"]')
        expect(hunks.first).to_be_visible()
        count = hunks.count()
        hunks.first.locator('[data-action="review-undo"]').click()
        expect(page.locator('[data-role="review-decisions"]')).to_contain_text("Undone:")
        expect(hunks).to_have_count(count - 1)
        page.locator('[data-role="agent-message"]').last.scroll_into_view_if_needed()
        save(page, "review-light")


def checkpoints_dark(browser: Browser) -> None:
    """Three prompts to the demo agent that each change src/calculator.py (Code mode: it edits without asking); the
    second's checkpoint opened: the file it would write back, and Edit and resend with the prompt reworded."""
    with server_in("calculator", [], {"DEMO_AGENT_SPEED": "0"}, sample_project) as (server, _workspace):
        page = new_page(browser, "dark", height=1500)  # from the second prompt to the end
        open_session(page, server)
        page.locator("#session-controls select").first.select_option("code")  # edits without asking
        run_prompts(
            page,
            [
                "edit divide() to fail clearly on zero",
                "edit add power() to the calculator",
                "edit leave a review note at the end",
            ],
        )
        opened = page.locator('[data-role="tool-call"] details.diff[open] > summary')
        while opened.count():
            opened.first.click()  # each edit's diff folded, as a person reading back would: the prompts in view
        second = page.locator('[data-role="user-message"]').nth(1)
        checkpoint = second.locator('[data-role="checkpoint"]')
        checkpoint.locator("summary").click()
        expect(checkpoint.locator('[data-role="checkpoint-preview"]')).to_be_visible()
        expect(checkpoint.locator('[data-role="checkpoint-changes"] li').first).to_be_visible()
        checkpoint.locator('[data-role="checkpoint-resend"] textarea').fill(
            "edit add power() and sqrt() to the calculator"
        )
        checkpoint.locator('[data-role="checkpoint-summary"]').check()
        page.evaluate("document.scrollingElement.scrollTo(0, document.scrollingElement.scrollHeight)")
        save(page, "checkpoints-dark")


def git_repository(repo: Path) -> None:
    """The sample project in ``repo``, committed as a git repository."""
    sample_project(repo)
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "A tiny calculator"]):
        subprocess.run([*GIT, "-C", str(repo), *command], check=True, capture_output=True)


def worktree_light(browser: Browser) -> None:
    """A git repository of the sample project; New session with "Work in a new worktree"; ``edit`` in Code mode;
    the Branch panel with the diff since the branch started and the Commit form (a message typed)."""
    with server_in("calculator", [], {"DEMO_AGENT_SPEED": "0"}, git_repository) as (server, _repo):
        page = new_page(browser, "light", height=900)
        page.goto(server.sign_in_url("/"))
        page.check('[data-role="worktree-choice"]')
        page.click('[data-action="new-session"][data-agent="demo"]')
        expect(page.locator("#session")).to_have_attribute("data-agent-state", "ready", timeout=20_000)
        expect(page.locator('[data-role="branch"]')).to_be_visible()
        page.locator("#session-controls select").first.select_option("code")  # edits without asking
        run_prompts(page, ["edit divide() to fail clearly on zero"])
        page.click('[data-action="show-worktree"]')
        panel = page.locator('[data-role="worktree"]')
        expect(panel.locator('[data-role="uncommitted"]')).to_be_visible()
        panel.locator('[data-role="commit-message"]').fill("divide() raises a clear ValueError for zero")
        page.locator('[data-role="agent-message"]').last.scroll_into_view_if_needed()
        save(page, "worktree-light")


def mcp_light(browser: Browser) -> None:
    """An agent on the ACP TypeScript SDK whose catalogue entry gives it two MCP servers: server-everything (stdio),
    used, and a ticket tracker over SSE, left out (the agent takes only stdio and http); its answer is the
    ``echo`` tool's."""
    folder = Path(tempfile.mkdtemp(prefix="shot-"))
    config = folder / "agents.toml"
    config.write_text(
        f'[agents.ts-mcp]\ncommand = "{node()}"\nargs = ["{TS_AGENTS / "mcp_agent.mjs"}"]\nstart_timeout = 60\n'
        'description = "An agent on the ACP TypeScript SDK that calls its MCP servers\' echo tool"\n'
        f'[agents.ts-mcp.mcp_servers.everything]\ncommand = "{node()}"\nargs = ["{EVERYTHING}"]\n'
        '[agents.ts-mcp.mcp_servers.tickets]\ntype = "sse"\nurl = "https://tickets.example.com/mcp/sse"\n'
    )
    try:
        with server_in("webshop", [], {"WEBCLIENT_CONFIG": str(config)}, lambda _: None) as (server, _workspace):
            page = new_page(browser, "light", height=560)
            page.goto(server.sign_in_url("/"))
            page.click('[data-action="new-session"][data-agent="ts-mcp"]')
            expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=60_000)
            expect(page.locator('header [data-role="mcp-servers"] [data-mcp-server="everything"]')).to_be_visible()
            send(page, "Ask the everything server to echo: the checkout tests pass")
            answer = page.locator('[data-role="agent-message"]').last
            expect(answer).to_contain_text("everything answered", timeout=60_000)
            page.locator('[data-role="notice"] details > summary').first.click()  # why one was left out
            save(page, "mcp-light")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


SHOTS: dict[str, Callable[[Browser], None]] = {
    "review-light": review_light,
    "checkpoints-dark": checkpoints_dark,
    "worktree-light": worktree_light,
    "mcp-light": mcp_light,
}


if __name__ == "__main__":
    take(SHOTS, sys.argv[1:])
