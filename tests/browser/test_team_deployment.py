"""The deployment `docs/deployment.md` tells a team to use, end to end in Chromium: Debian's nginx in front over HTTPS,
signing people in (its own basic auth, passed on as a trusted header) and serving the client under ``/agents/``,
reaching the server on its unix socket (mode 0660: only nginx's user and group may connect); the
agents in bubblewrap with the network off; a portal of another site (``https://localhost:PORT``, while the client is
``https://127.0.0.1:PORT/agents/``) embedding a session at desktop and phone widths. The portal hears the session
start and its turn end, the agent's terminal command runs, and the agent runs inside the sandbox (what it and its
commands can reach from there is `tests/sandbox/`'s business). The agent works in the person's own folder, as the
guide lays them out (``--workspace .../{person}``)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.browser import Browsers
from tests.support.nginx import TEAM, behind_proxy, proxy_in_front, socket_folder, unix_upstream
from tests.support.portal import client_frame, host_page, types, wait_for_messages
from tests.support.servers import ServerFactory, free_port, live_processes
from tests.support.urls import at

pytestmark = pytest.mark.browser


def agents_and_their_parents(server_pid: int, script: str) -> dict[int, list[str]]:
    """Each process of the server's that runs ``script``, with the programs between it and the server, nearest first
    (read from ``/proc``, independently of the code under test)."""
    parent_of = {pid: parent for pid, parent, _ in live_processes()}
    found = {}
    for pid in parent_of:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            program = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        if program == "bwrap" or not any(part.endswith(script.encode()) for part in command):
            continue  # (bwrap's own command line names the script too)
        chain, above = [], parent_of.get(pid, 0)
        while above > 1 and above != server_pid:
            chain.append(Path(f"/proc/{above}/comm").read_text().strip())
            above = parent_of.get(above, 0)
        if above == server_pid:
            found[pid] = chain
    return found


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_a_portal_embeds_a_sandboxed_session_through_the_proxy_under_a_prefix(
    start_server: ServerFactory, browsers: Browsers, width: int, height: int, tmp_path: Path
) -> None:
    port = free_port()
    with socket_folder() as path:
        server = start_server(
            workspace=tmp_path / "{person}",
            **behind_proxy(port, tls=True, uds=path),
            WEBCLIENT_SANDBOX="bwrap",
            WEBCLIENT_SANDBOX_NETWORK="off",
            WEBCLIENT_FRAME_ANCESTORS=f"'self' https://localhost:{port}",
        )
        assert stat.S_IMODE(path.stat().st_mode) == 0o660  # only nginx's user and group reach the server
        client = f"https://127.0.0.1:{port}/agents"
        portal = host_page(client, {"prompt": "run 2", "theme": "dark"})
        with proxy_in_front(
            unix_upstream(path), TEAM, port, root="/agents", strip=True, tls=True, portal=portal
        ) as proxy:
            # Signed in to the proxy before the frame asks, as a single sign-on proxy's own cookie would have it: a
            # browser answers no sign-in challenge inside a frame of another site.
            page = browsers.page("alice", ignore_https_errors=True, extra_http_headers=proxy.signed_in("alice"))
            page.set_viewport_size({"width": width, "height": height})
            page.goto(proxy.portal_url)

            # The framed start page starts the session, as alice, under the prefix; the portal hears it and the turn.
            messages = wait_for_messages(page, 3)
            assert types(messages) == ["session-created", "turn-started", "turn-ended"], (messages, proxy.log())
            frame = client_frame(page, client)
            session_id = frame.locator("#session").get_attribute("data-session-id")
            assert messages[0]["url"] == at(client, "session", session_id=session_id)
            assert messages[2]["stopReason"] == "end_turn"

            # The agent's terminal command ran, and the page fits the portal's frame.
            expect(frame.locator('[data-role="terminal"]')).to_contain_text("line 1 done")
            expect(frame.locator(".message.agent").last).to_contain_text('"exit": {"exitCode": 0')
            overflow = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            assert frame.evaluate(overflow) <= 0 and page.evaluate(overflow) <= 0

            # The agent runs inside bubblewrap, not as the server's child.
            agents = agents_and_their_parents(server.process.pid, "scripted_agent.py")
            assert len(agents) == 1 and all("bwrap" in chain for chain in agents.values()), agents
            # In her own folder, made for her (read from /proc: where the agent's process is).
            assert [os.readlink(f"/proc/{pid}/cwd") for pid in agents] == [str(tmp_path / "alice")]
