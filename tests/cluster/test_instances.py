"""Several instances on one PostgreSQL (real processes, on loopback): a session made on one is seen live and driven
through another, a new session is found at once wherever the next request lands, and a session whose instance dies
is taken up by another within 15 s, its page reconnected to the same thread."""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import re
import signal
import sys
import threading
import time
from pathlib import Path

import asyncpg
import httpx
import pytest
import websockets

from tests.support.cluster import TOKEN, one_service, signed_in
from tests.support.nginx import POOL, PROXY_ADDRESS, proxy_in_front
from tests.support.postgres import Cluster
from tests.support.restarts import PERMISSION_ASKED, created, stop, until
from tests.support.servers import AGENTS, Server, ServerFactory, free_port, live_processes
from tests.support.tcp_relay import relay_to
from tests.support.urls import URLS, socket_at


async def lease_holder(database: str, session_id: str) -> str | None:
    """The address of the instance whose lease on ``session_id`` has not expired, as the database says."""
    connection = await asyncpg.connect(database)
    try:
        return await connection.fetchval(
            "SELECT i.address FROM session_leases l JOIN instances i ON i.id = l.instance "
            "WHERE l.session_id = $1 AND l.expires > now()",
            session_id,
        )
    finally:
        await connection.close()


async def journal_holding(database: str, session_id: str, text: str) -> int:
    """How many of the session's journal records hold ``text``."""
    connection = await asyncpg.connect(database)
    try:
        found = await connection.fetchval(
            "SELECT count(*) FROM journal WHERE session_id = $1 AND strpos(body, $2) > 0", session_id, text
        )
        return int(found)
    finally:
        await connection.close()


async def said_by_the_person(database: str) -> list[str]:
    """Every prompt of the store's transcripts, in order."""
    connection = await asyncpg.connect(database)
    try:
        rows = await connection.fetch("SELECT text FROM transcript WHERE role = 'user' ORDER BY id")
        return [row["text"] for row in rows]
    finally:
        await connection.close()


async def a_session(server: Server, prompt: str | None = None, mark: str = "", linger: float = 0) -> str:
    """A new session made on ``server``, its page open until its agent is ready; with ``prompt``, that typed too and
    the page left once a frame holds ``mark``, ``linger`` seconds later. Returns its id."""
    async with httpx.AsyncClient(base_url=server.url, headers=server.headers) as http:
        session_id = created(await http.post(URLS.for_("new_session"))).rsplit("/", 1)[1]
    async with websockets.connect(
        socket_at(server.url, session_id), additional_headers=server.headers, max_size=None
    ) as socket:
        first = str(await socket.recv())
        nonce = re.search(r'id="prompt-nonce" value="([^"]+)"', first)
        assert nonce is not None
        if 'data-agent-state="ready"' not in first:  # ready before the page opened: no frame says it again
            await until(socket, 'data-agent-state="ready"')
        if prompt is not None:
            await socket.send(json.dumps({"action": "prompt", "prompt": prompt, "nonce": nonce.group(1) + "-1"}))
            await until(socket, mark)
            await asyncio.sleep(linger)
    return session_id


async def first_frame(server: Server, session_id: str) -> str:
    async with websockets.connect(
        socket_at(server.url, session_id), additional_headers=server.headers, max_size=None, open_timeout=5
    ) as socket:
        return str(await socket.recv())


@pytest.mark.process
def test_a_page_on_another_instance_shows_the_turn_live_and_answers_its_question(
    start_server: ServerFactory, postgresql: Cluster
) -> None:
    service = one_service(postgresql)
    owner = signed_in(start_server(agent=None, process=True, **service))
    other = signed_in(start_server(agent=None, process=True, **service))

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=owner.url, headers=owner.headers) as http:
            session_id = created(await http.post(URLS.for_("new_session"))).rsplit("/", 1)[1]
        assert await lease_holder(service["WEBCLIENT_DATABASE_URL"], session_id) == owner.url
        # Asked for at once on the other instance: found (forwarded to its owner), not 404.
        async with httpx.AsyncClient(base_url=other.url, headers=other.headers) as http:
            page = await http.get(URLS.for_("session", session_id=session_id))
            assert page.status_code == 200 and session_id in page.text
            # Its socket is the browser's origin's (the instance it asked), not the owner's that rendered it.
            assert f'"{other.url.replace("http", "ws", 1)}/sessions/{session_id}/ws' in page.text
        connect = {"additional_headers": owner.headers, "max_size": None}
        async with (
            websockets.connect(socket_at(other.url, session_id), **connect) as through_other,
            websockets.connect(socket_at(owner.url, session_id), **connect) as on_owner,
        ):
            first = str(await through_other.recv())
            nonce = re.search(r'id="prompt-nonce" value="([^"]+)"', first)
            assert nonce is not None
            if 'data-agent-state="ready"' not in first:
                await until(through_other, 'data-agent-state="ready"')
            prompt = {"action": "prompt", "prompt": "edit", "nonce": nonce.group(1) + "-1"}
            await through_other.send(json.dumps(prompt))
            asked = await until(through_other, PERMISSION_ASKED)
            await until(on_owner, PERMISSION_ASKED)  # the owner's own page sees the same question
            option = re.search(r'"option_id": "([^"]+)", "request_id": "([^"]+)"', asked)
            assert option is not None
            answer = {"action": "permission", "request_id": option.group(2), "option_id": option.group(1)}
            await through_other.send(json.dumps(answer))  # answered through the instance that does not run it
            await until(on_owner, 'data-turn-state="idle"')
            await until(through_other, 'data-turn-state="idle"')
        async with httpx.AsyncClient(base_url=other.url, headers=other.headers) as http:
            exported = (await http.get(URLS.for_("export", session_id=session_id))).text
        assert exported.count("You chose:") == 1 or "allow" in exported.lower(), exported[:2000]

    asyncio.run(scenario())


@pytest.mark.process
def test_a_session_whose_instance_dies_is_taken_up_by_another_within_15_seconds(
    start_server: ServerFactory, postgresql: Cluster
) -> None:
    service = one_service(postgresql)
    database = service["WEBCLIENT_DATABASE_URL"]
    doomed = signed_in(start_server(agent=None, process=True, **service))
    survivor = signed_in(start_server(agent=None, process=True, **service))

    session_id = asyncio.run(a_session(doomed))
    killed = time.monotonic()
    stop(doomed, signal.SIGKILL)

    async def reconnect() -> str:
        """What a page does: reconnect through an instance that answers. Its socket is not refused while the dead
        instance's lease runs (the page would back off, for up to a minute): it is held until the session is here."""
        async with websockets.connect(
            socket_at(survivor.url, session_id), additional_headers=survivor.headers, max_size=None, open_timeout=30
        ) as socket:
            return await until(socket, "moved to another instance")

    frame = asyncio.run(asyncio.wait_for(reconnect(), 30))
    took = time.monotonic() - killed
    assert took < 15, f"taken up {took:.1f} s after the kill"
    assert asyncio.run(lease_holder(database, session_id)) == survivor.url
    assert session_id in frame
    deadline = time.monotonic() + 10  # the journal's batches are written a moment later
    while asyncio.run(journal_holding(database, session_id, "moved to another instance")) == 0:
        assert time.monotonic() < deadline, "the move is not on record"
        time.sleep(0.2)
    print(f"taken up by the other instance {took:.1f} s after kill -9")


@pytest.mark.process
def test_an_instance_that_stops_hands_its_idle_sessions_over_asleep(
    start_server: ServerFactory, postgresql: Cluster
) -> None:
    """SIGTERM (a rolling deploy): the idle session's agent sleeps, its lease goes, and the next page on another
    instance wakes it there."""
    service = one_service(postgresql)
    stopping = signed_in(start_server(agent=None, process=True, **service, WEBCLIENT_DRAIN_SECONDS="20"))
    staying = signed_in(start_server(agent=None, process=True, **service))

    session_id = asyncio.run(a_session(stopping))
    began = time.monotonic()
    assert stopping.process is not None
    stopping.process.send_signal(signal.SIGTERM)
    stopping.process.wait(timeout=20)  # nothing under way: it hands over and stops well before its 20 s
    assert time.monotonic() - began < 10

    async def woken_elsewhere() -> str:
        async with websockets.connect(
            socket_at(staying.url, session_id), additional_headers=staying.headers, max_size=None
        ) as socket:
            ready = await until(socket, 'data-agent-state="ready"')
            # Handed over, not taken up as from an instance that died (which says so in the thread).
            assert "moved to another instance" not in ready
            return ready

    asyncio.run(woken_elsewhere())
    database = service["WEBCLIENT_DATABASE_URL"]
    assert asyncio.run(lease_holder(database, session_id)) == staying.url
    # Put to sleep by the instance that stopped (on record), not taken up as from one that died.
    assert asyncio.run(journal_holding(database, session_id, '"action": "sleep"')) == 1
    assert asyncio.run(journal_holding(database, session_id, "moved to another instance")) == 0
    stop(stopping, signal.SIGTERM)


def agents_of(server: Server) -> list[int]:
    """The pids of the processes ``server`` started but its reaper (`webclient.workspace.reaper`): its agents."""
    assert server.process is not None
    children = [pid for pid, parent, _ in live_processes() if parent == server.process.pid]
    return [pid for pid in children if b"webclient.workspace.reaper" not in command_line(pid)]


def command_line(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # gone meanwhile
        return b"webclient.workspace.reaper"


@pytest.mark.process
def test_an_instance_cut_off_from_the_database_stops_its_agents_before_another_takes_them_up(
    start_server: ServerFactory, postgresql: Cluster
) -> None:
    service = one_service(postgresql)
    database = service.pop("WEBCLIENT_DATABASE_URL")
    with relay_to("127.0.0.1", postgresql.port) as relay:
        through_relay = database.replace(f":{postgresql.port}/", f":{relay.port}/")
        cut_off = signed_in(start_server(agent=None, process=True, WEBCLIENT_DATABASE_URL=through_relay, **service))
        other = signed_in(start_server(agent=None, process=True, WEBCLIENT_DATABASE_URL=database, **service))

        session_id = asyncio.run(a_session(cut_off))
        assert agents_of(cut_off)
        relay.cut.set()  # from now on its database hears nothing from it, and it nothing from its database
        cut = time.monotonic()
        stopped = taken = None
        while taken is None:
            assert time.monotonic() - cut < 30, "nobody took the session up"
            if stopped is None and not agents_of(cut_off):
                stopped = time.monotonic() - cut
            if asyncio.run(lease_holder(database, session_id)) == other.url:
                taken = time.monotonic() - cut
            time.sleep(0.1)
        # Never two agents for one session: the cut-off instance stopped its own before its lease could be taken.
        assert stopped is not None and stopped < taken, (stopped, taken)
        print(f"cut off: its agent stopped after {stopped:.1f} s, the session taken up elsewhere after {taken:.1f} s")
        stop(cut_off, signal.SIGKILL)  # its store is still waiting on the cut connections


async def holders(database: str) -> dict[str, int]:
    """How many sessions each instance (by address) holds the lease of."""
    connection = await asyncpg.connect(database)
    try:
        rows = await connection.fetch(
            "SELECT i.address, count(*) AS held FROM session_leases l JOIN instances i ON i.id = l.instance "
            "WHERE l.expires > now() GROUP BY i.address"
        )
        return {row["address"]: row["held"] for row in rows}
    finally:
        await connection.close()


@pytest.mark.process
def test_ninety_new_sessions_asked_of_one_instance_spread_over_three(
    start_server: ServerFactory, postgresql: Cluster
) -> None:
    """Placement is this service's, not the proxy's: every New session goes to one instance, which runs a third and
    sends the rest to the least loaded of the others (each within 20 % of a third)."""
    service = one_service(postgresql)
    first, second, third = (signed_in(start_server(process=True, **service)) for _ in range(3))
    time.sleep(2.5)  # a heartbeat each: the first knows of the others

    async def ninety() -> list[str]:
        async with httpx.AsyncClient(base_url=first.url, headers=first.headers, timeout=60) as http:
            return [created(await http.post(URLS.for_("new_session"))) for _ in range(90)]

    made = asyncio.run(ninety())
    assert len(set(made)) == 90
    spread = asyncio.run(holders(service["WEBCLIENT_DATABASE_URL"]))
    assert set(spread) == {first.url, second.url, third.url}, spread
    assert all(24 <= held <= 36 for held in spread.values()), spread
    assert sum(spread.values()) == 90  # every one still held: none lost on the way


@pytest.mark.process
def test_a_persons_limit_counts_their_sessions_on_every_instance(
    start_server: ServerFactory, postgresql: Cluster
) -> None:
    service = {**one_service(postgresql), "WEBCLIENT_MAX_SESSIONS_PER_PERSON": "2"}
    one, other = (signed_in(start_server(process=True, **service)) for _ in range(2))
    for server in (one, other):
        with httpx.Client(base_url=server.url, headers=server.headers) as http:
            assert http.post(URLS.for_("new_session")).status_code == 303
    for server in (one, other):  # one session on each: the third is refused wherever it is asked for
        with httpx.Client(base_url=server.url, headers=server.headers) as http:
            refused = http.post(URLS.for_("new_session"))
            assert refused.status_code == 429, refused.text[:500]
            assert "2 live sessions" in refused.text


RESUMABLE = f"{sys.executable} {AGENTS / 'resumable_agent.py'}"


async def prompting(base: str, until_done: threading.Event) -> list[tuple[str, str]]:
    """A person who types prompts one after the other into one session through the proxy at ``base`` (a new one
    once the last was answered, a moment later) until ``until_done`` is set: reconnecting whenever the socket
    closes, and typing again only a prompt the thread does not show. Returns each prompt with its answer."""
    headers = {"Authorization": f"token {TOKEN}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as http:
        session_id = created(await http.post(URLS.for_("new_session"))).rsplit("/", 1)[1]
    answered: list[tuple[str, str]] = []
    while not until_done.is_set() or len(answered) < 3:
        try:
            async with websockets.connect(
                socket_at(base, session_id), additional_headers=headers, max_size=None, open_timeout=10
            ) as socket:
                frame = html.unescape(str(await socket.recv()))
                nonce = re.search(r'id="prompt-nonce" value="([^"]+)"', frame)
                assert nonce is not None
                while not until_done.is_set() or len(answered) < 3:
                    text = f"prompt {len(answered):03d}"
                    if f"You said: {text}" not in frame:
                        if text not in frame:
                            prompt = {"action": "prompt", "prompt": text, "nonce": f"{nonce.group(1)}-{text}"}
                            await socket.send(json.dumps(prompt))
                        frame = await until(socket, f"You said: {text}", 60)
                    answer = re.findall(rf"I remember \d+ earlier prompts\. You said: {text}", frame)[-1]
                    answered.append((text, answer))
                    await asyncio.sleep(0.2)
        except (websockets.exceptions.ConnectionClosed, websockets.exceptions.InvalidStatus, OSError):
            await asyncio.sleep(0.3)
    return answered


@pytest.mark.process
def test_a_rolling_restart_of_every_instance_loses_no_prompt(
    start_server: ServerFactory, postgresql: Cluster, tmp_path: Path
) -> None:
    """Three instances behind nginx are stopped (SIGTERM) and started again one after the other while a person keeps
    prompting one session: every prompt is answered once, by an agent that remembers every earlier one."""
    service = {
        **one_service(postgresql),
        "WEBCLIENT_TRUSTED_PROXIES": PROXY_ADDRESS,
        "WEBCLIENT_DRAIN_SECONDS": "20",
        "RESUME_MODE": "resume",
        "SESSIONS_FILE": str(tmp_path / "agent-sessions.json"),  # the agent's own store, on a "shared volume"
    }
    workspace = tmp_path / "work"
    workspace.mkdir()
    ports = [free_port() for _ in range(3)]
    servers = [start_server(RESUMABLE, workspace, process=True, port=port, **service) for port in ports]
    restarted: list[int] = []
    done = threading.Event()

    def restart_each() -> None:
        try:
            for index, port in enumerate(ports):
                time.sleep(1.0)
                process = servers[index].process
                assert process is not None
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=30)
                servers[index] = start_server(RESUMABLE, workspace, process=True, port=port, **service)
                restarted.append(port)
        finally:
            done.set()

    with proxy_in_front(POOL, (), balanced=[f"127.0.0.1:{port}" for port in ports]) as proxy:
        restarting = threading.Thread(target=restart_each)
        restarting.start()
        answered = asyncio.run(asyncio.wait_for(prompting(proxy.url, done), 180))
        restarting.join(60)
    assert restarted == ports
    prompts = [text for text, _ in answered]
    assert [answer for _, answer in answered] == [
        f"I remember {n} earlier prompts. You said: {text}" for n, text in enumerate(prompts)
    ]
    transcript = asyncio.run(said_by_the_person(service["WEBCLIENT_DATABASE_URL"]))
    assert transcript == prompts  # each typed (and journalled) once
    print(f"{len(prompts)} prompts answered while the three instances restarted one after the other")


@pytest.mark.process
def test_a_session_killed_while_its_question_waits_resumes_elsewhere_at_once_with_the_question_closed(
    start_server: ServerFactory, postgresql: Cluster
) -> None:
    """Mid-turn (a permission question open), nobody watching: the other instance starts its agent again by itself,
    and the question shows unanswered, never answered twice."""
    service = one_service(postgresql)
    database = service["WEBCLIENT_DATABASE_URL"]
    doomed = signed_in(start_server(agent=None, process=True, **service))
    survivor = signed_in(start_server(agent=None, process=True, **service))

    session_id = asyncio.run(a_session(doomed, "edit", PERMISSION_ASKED))
    time.sleep(0.5)  # the journal's batch with the question is written
    assert not agents_of(survivor)
    stop(doomed, signal.SIGKILL)
    killed = time.monotonic()
    while not agents_of(survivor):  # its agent started again with no page open
        assert time.monotonic() - killed < 15, "the session was not taken up mid-turn"
        time.sleep(0.2)
    assert asyncio.run(lease_holder(database, session_id)) == survivor.url
    frame = html.unescape(asyncio.run(first_frame(survivor, session_id)))
    assert "Not answered: the server restarted." in frame
    assert "moved to another instance" in frame
    assert PERMISSION_ASKED not in frame  # no button left to answer the old question with


@pytest.mark.process
def test_the_inbox_of_any_instance_lists_and_answers_the_questions_of_every_instance(
    start_server: ServerFactory, postgresql: Cluster
) -> None:
    service = one_service(postgresql)
    owner = signed_in(start_server(agent=None, process=True, **service))
    other = signed_in(start_server(agent=None, process=True, **service))

    session_id = asyncio.run(a_session(owner, "edit", PERMISSION_ASKED))
    with httpx.Client(base_url=other.url, headers={**other.headers, "Origin": other.url}) as http:
        assert http.get(URLS.for_("inbox"), params={"part": "count"}).text == "Inbox (1)"
        listed = http.get(URLS.for_("inbox"), params={"part": "list"}).text
        item = re.search(r'<li class="inbox-item" data-key="([^":]+):([^"]+)"', listed)
        assert item is not None and item.group(1) == session_id
        action = re.search(r'<form method="post" action="([^"]+)" class="inbox-answer">', listed)
        option = re.search(r'data-option-id="([^"]+)"', listed)
        assert action is not None and option is not None
        assert action.group(1) == URLS.for_("inbox_answer", session_id=session_id)
        answered = http.post(action.group(1), data={"request_id": item.group(2), "option_id": option.group(1)})
        assert answered.status_code == 303, answered.text[:300]
        deadline = time.monotonic() + 10
        while http.get(URLS.for_("inbox"), params={"part": "count"}).text != "Inbox":
            assert time.monotonic() < deadline, "the answer did not reach the instance that runs the session"
            time.sleep(0.2)
    with httpx.Client(base_url=owner.url, headers=owner.headers) as http:
        assert http.get(URLS.for_("inbox"), params={"part": "count"}).text == "Inbox"


@pytest.mark.process
@pytest.mark.parametrize("step", ["starting", "streaming"])
def test_a_kill_at_another_step_of_a_turn_brings_the_session_back_on_the_other_instance(
    start_server: ServerFactory, postgresql: Cluster, step: str
) -> None:
    """Killed as its agent starts (taken up when a page opens it) or while its answer streams (the demo's slow walk:
    taken up at once, the turn marked interrupted): either way the session runs on the other instance within 15 s."""
    service = {**one_service(postgresql), "DEMO_AGENT_SPEED": "1"}
    doomed = signed_in(start_server(agent=None, process=True, **service))
    survivor = signed_in(start_server(agent=None, process=True, **service))

    if step == "starting":
        with httpx.Client(base_url=doomed.url, headers=doomed.headers) as http:
            session_id = created(http.post(URLS.for_("new_session"))).rsplit("/", 1)[1]
    else:  # part of the demo's slow walk streamed, and journalled
        session_id = asyncio.run(a_session(doomed, "steer", 'data-turn-state="running"', linger=0.8))
    stop(doomed, signal.SIGKILL)
    killed = time.monotonic()

    async def back() -> str:
        while True:
            with contextlib.suppress(OSError, websockets.exceptions.WebSocketException):
                async with websockets.connect(
                    socket_at(survivor.url, session_id), additional_headers=survivor.headers, max_size=None
                ) as socket:
                    frame = html.unescape(str(await socket.recv()))
                    if "moved to another instance" in frame:
                        ready = 'data-agent-state="ready"'
                        return frame if ready in frame else frame + await until(socket, ready, 20)
            await asyncio.sleep(0.3)

    frame = asyncio.run(asyncio.wait_for(back(), 30))
    assert time.monotonic() - killed < 15
    assert asyncio.run(lease_holder(service["WEBCLIENT_DATABASE_URL"], session_id)) == survivor.url
    if step == "streaming":
        assert "The server restarted during this turn" in frame


@pytest.mark.process
def test_a_new_session_of_an_agent_that_asks_for_a_label_goes_to_an_instance_that_offers_it(
    start_server: ServerFactory, postgresql: Cluster, tmp_path: Path
) -> None:
    config = tmp_path / "agents.toml"
    scripted = json.dumps(str(AGENTS / "scripted_agent.py"))
    config.write_text(
        f'[agents.on-gpu]\ncommand = {json.dumps(sys.executable)}\nargs = [{scripted}]\ninstance_labels = ["gpu"]\n'
        f"[agents.anywhere]\ncommand = {json.dumps(sys.executable)}\nargs = [{scripted}]\n"
    )
    service = {**one_service(postgresql), "WEBCLIENT_CONFIG": str(config)}
    plain = signed_in(start_server(None, process=True, **service))
    with_gpu = signed_in(start_server(None, process=True, **service, WEBCLIENT_INSTANCE_LABELS="gpu,eu"))
    time.sleep(2.5)  # a heartbeat each: each knows what the other offers
    with httpx.Client(base_url=plain.url, headers=plain.headers) as http:
        on_gpu = created(http.post(URLS.for_("new_session"), data={"agent": "on-gpu"})).rsplit("/", 1)[1]
        anywhere = created(http.post(URLS.for_("new_session"), data={"agent": "anywhere"})).rsplit("/", 1)[1]
    database = service["WEBCLIENT_DATABASE_URL"]
    assert asyncio.run(lease_holder(database, on_gpu)) == with_gpu.url  # asked of the instance without one
    assert asyncio.run(lease_holder(database, anywhere)) == plain.url  # no label asked: where it was asked


@pytest.mark.process
def test_an_instance_given_another_ones_address_takes_nothing_from_it(
    start_server: ServerFactory, postgresql: Cluster
) -> None:
    """Two instances given one WEBCLIENT_INSTANCE_URL by mistake: the second is not taken for the first restarted (it
    asks who answers there, and it is not itself): the first keeps its sessions, and the log says what to fix."""
    service = one_service(postgresql)
    first = signed_in(start_server(agent=None, process=True, **service))
    with httpx.Client(base_url=first.url, headers=first.headers) as http:
        session_id = created(http.post(URLS.for_("new_session"))).rsplit("/", 1)[1]
    second = start_server(agent=None, process=True, **service, WEBCLIENT_INSTANCE_URL=first.url)
    time.sleep(3)  # it has asked who answers at that address, and been answered
    assert asyncio.run(lease_holder(service["WEBCLIENT_DATABASE_URL"], session_id)) == first.url
    assert second.process is not None and second.process.stdout is not None
    second.process.send_signal(signal.SIGTERM)
    second.process.wait(timeout=30)
    assert "give each instance its own WEBCLIENT_INSTANCE_URL" in second.process.stdout.read().decode()


@pytest.mark.process
def test_a_resume_counts_the_persons_sessions_on_the_other_instances_too(
    start_server: ServerFactory, postgresql: Cluster
) -> None:
    service = {**one_service(postgresql), "WEBCLIENT_MAX_SESSIONS_PER_PERSON": "2"}
    one, other = (signed_in(start_server(process=True, **service)) for _ in range(2))
    with httpx.Client(base_url=one.url, headers={**one.headers, "Origin": one.url}) as http:
        ended = created(http.post(URLS.for_("new_session"))).rsplit("/", 1)[1]
        assert http.post(URLS.for_("end_session", session_id=ended)).status_code in (200, 303)
    with httpx.Client(base_url=other.url, headers=other.headers) as http:
        assert http.post(URLS.for_("new_session")).status_code == 303  # one live on the other instance
    with httpx.Client(base_url=one.url, headers=one.headers) as http:
        assert http.post(URLS.for_("new_session")).status_code == 303  # and one here: two, the most
    time.sleep(2.5)  # a heartbeat: this instance knows what its sessions' owner has on the other

    async def resume() -> str:
        async with websockets.connect(
            socket_at(one.url, ended), additional_headers=one.headers, max_size=None
        ) as socket:
            await socket.recv()
            await socket.send(json.dumps({"action": "resume"}))
            return await until(socket, "the most this server allows", 10)

    assert "2 live sessions" in asyncio.run(resume())
