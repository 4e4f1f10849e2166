"""No request body fills the server: every route takes a body as large as what it needs and no larger, refused
before it is read (or as soon as a body without a length passes the limit), and files only where a file is expected.

Bodies are streamed by generators, never built in memory, and the server is watched from outside: its resident
memory (``/proc/PID/status``) and the temporary folder a spooled file part would land in.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.routing import Route

from tests.support.probes import new_session
from tests.support.servers import AGENTS, Server, ServerFactory
from tests.support.urls import URLS
from tests.web.test_access import fill
from webclient.config import Settings
from webclient.session.uploads import MAX_UPLOAD_BYTES
from webclient.web.access.body_limits import body_limits
from webclient.web.app import routes

MIB = 1024 * 1024
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def rss_mib(server: Server) -> float:
    """The server process's resident memory, read from /proc."""
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    found = re.search(r"VmRSS:\s+(\d+) kB", status)
    assert found is not None
    return int(found.group(1)) / 1024


def file_part(mib: int) -> Iterator[bytes]:
    """A multipart body with one file part of ``mib`` MiB, made as it is sent."""
    yield b'--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nKEY\r\n'
    yield b'--b\r\nContent-Disposition: form-data; name="value"; filename="big"\r\n'
    yield b"Content-Type: application/octet-stream\r\n\r\n"
    chunk = b"x" * MIB
    for _ in range(mib):
        yield chunk
    yield b"\r\n--b--\r\n"


def fields(count: int, size: int) -> Iterator[bytes]:
    """A form of ``count`` fields of ``size`` bytes each, made as it is sent."""
    value = b"x" * size
    for index in range(count):
        yield b"%sfield%d=%s" % (b"&" if index else b"", index, value)


def post(server: Server, path: str, body: Iterator[bytes], headers: dict[str, str]) -> httpx.Response | None:
    """Send ``body``: the server's answer, or None when it closed the connection while the body was still coming
    (having answered before reading it: the answer is then lost to this client, the refusal is what counts)."""
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=60) as client:
        try:
            return client.post(path, content=body, headers=headers)
        except (httpx.WriteError, httpx.RemoteProtocolError, httpx.ReadError):
            return None


@pytest.mark.process
def test_a_400_mib_file_part_to_the_secrets_form_is_refused_and_nothing_is_spooled(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    server = start_server(process=True, TMPDIR=str(spool))
    before = rss_mib(server)
    for declared in (False, True):  # chunked (no length: counted as it comes), then with its length said
        headers = {"Content-Type": "multipart/form-data; boundary=b"}
        if declared:
            headers["Content-Length"] = str(sum(map(len, file_part(400))))
        answer = post(server, URLS.for_("save_secret"), file_part(400), headers)
        assert answer is None or answer.status_code in (413, 415), answer.text if answer else None
        assert not list(spool.iterdir())  # nothing spooled to disk
    assert rss_mib(server) - before < 50
    assert server.http().get(URLS.for_("secrets")).status_code == 200  # and the server answers on


@pytest.mark.process
@pytest.mark.parametrize("declared", [True, False], ids=["with-length", "chunked"])
def test_300_fields_of_1_mib_to_the_rules_form_are_refused(start_server: ServerFactory, declared: bool) -> None:
    server = start_server(process=True)
    before = rss_mib(server)
    headers = dict(FORM)
    if declared:
        headers["Content-Length"] = str(sum(map(len, fields(300, MIB))))
    answer = post(server, URLS.for_("rules"), fields(300, MIB), headers)
    assert answer is None or answer.status_code == 413, answer.text if answer else None
    assert rss_mib(server) - before < 50
    assert server.http().get(URLS.for_("rules")).status_code == 200


def test_every_route_has_a_body_limit_and_refuses_a_body_past_it(start_server: ServerFactory) -> None:
    """Walks the real app's route table: every route has a limit (a route added later gets the small default), and
    a body one byte over it is refused before the route runs."""
    limits = body_limits(Settings())
    table = [
        (method, route.path, route.name)
        for route in routes()
        if isinstance(route, Route)
        for method in sorted(route.methods or ())
        if method != "HEAD"
    ]
    assert {name for _, _, name in table} <= set(limits) and len(table) > 30
    server = start_server()
    session_id = new_session(server)
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=60) as client:
        for method, path, name in table:
            body = b"x" * (limits[name] + 1)
            answer = client.request(method, fill(path, session_id), content=body, headers=FORM)
            assert answer.status_code == 413, f"{method} {path}: {answer.status_code} {answer.text[:200]}"
        assert (
            client.get(URLS.for_("session", session_id=session_id)).status_code == 200
        )  # no route ran: the session is still there
    assert limits["attachments"] > MAX_UPLOAD_BYTES > limits["rules"]


def test_a_body_without_a_length_is_counted(start_server: ServerFactory) -> None:
    server = start_server()
    session_id = new_session(server)
    for path in (URLS.for_("new_session"), URLS.for_("prompt", session_id=session_id), URLS.for_("secrets")):
        answer = post(server, path, fields(1, 4 * MIB), FORM)  # over even the prompt's limit (3 MiB and a form)
        assert answer is None or answer.status_code == 413, answer.text if answer else None
    assert not [m for m in server.received() if m.get("method") == "session/prompt"]


def test_a_file_part_is_refused_where_no_file_is_expected(start_server: ServerFactory) -> None:
    server = start_server()
    small = iter([b'--b\r\nContent-Disposition: form-data; name="decision"; filename="f"\r\n\r\nallow\r\n--b--\r\n'])
    answer = post(server, URLS.for_("rules"), small, {"Content-Type": "multipart/form-data; boundary=b"})
    assert answer is not None and answer.status_code == 415


def test_an_attachment_up_to_its_limit_is_still_taken(start_server: ServerFactory) -> None:
    server = start_server(agent=f"{sys.executable} {AGENTS / 'controls_agent.py'}")  # takes attached files
    session_id = new_session(server)
    data = b"a" * (MAX_UPLOAD_BYTES - 10)
    with server.http() as http:
        taken = http.post(
            URLS.for_("attachments", session_id=session_id), files={"file": ("notes.txt", data, "text/plain")}
        )
        assert taken.status_code == 200 and "notes.txt" in taken.text
        over = http.post(
            URLS.for_("attachments", session_id=session_id), files={"file": ("big.txt", data * 2, "text/plain")}
        )
        assert over.status_code == 413 and "The file is too large" in over.text
