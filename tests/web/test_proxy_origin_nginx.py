"""Two instances of one service (one store, one token) behind one real nginx upstream, taken in turn: a person signs in
once for both, and the pages' sockets are accepted on both without ``WEBCLIENT_ALLOWED_ORIGINS`` (the origin is the
one nginx forwards, believed from nginx alone: ``WEBCLIENT_TRUSTED_PROXIES`` names the address it connects from)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.support.nginx import POOL, PROXY_ADDRESS, proxy_in_front
from tests.support.servers import ServerFactory

HTML = {"Accept": "text/html,application/xhtml+xml"}
TOKEN = "one-token-for-the-service"


def socket_answer(url: str, headers: dict[str, str]) -> tuple[int, str]:
    """The HTTP status a socket's handshake was refused with, and which instance refused it (nginx's
    ``X-Upstream``)."""
    with pytest.raises(InvalidStatus) as refused:
        with connect(url, additional_headers=headers, open_timeout=10):
            pass
    response = refused.value.response
    return response.status_code, response.headers.get("X-Upstream", "")


@pytest.mark.process
def test_one_sign_in_and_sockets_through_nginx_for_two_instances(start_server: ServerFactory, tmp_path: Path) -> None:
    shared = {
        "WEBCLIENT_TRUSTED_PROXIES": PROXY_ADDRESS,
        "WEBCLIENT_DATA_DIR": str(tmp_path / "data"),
        "WEBCLIENT_TOKEN": TOKEN,
    }
    first = start_server(process=True, **shared)
    second = start_server(process=True, **shared)
    instances = {server.url.removeprefix("http://") for server in (first, second)}
    with proxy_in_front(POOL, (), balanced=sorted(instances)) as proxy, httpx.Client(base_url=proxy.url) as client:
        signed_in = client.get(f"/?token={TOKEN}", headers=HTML, follow_redirects=False)
        assert signed_in.status_code == 303, proxy.log()
        assert signed_in.headers["set-cookie"].startswith(f"webclient-{proxy.url.rsplit(':', 1)[1]}=")
        answered = set()
        for _ in range(4):
            page = client.get("/", headers=HTML)
            assert page.status_code == 200, (page.headers.get("X-Upstream"), page.text)
            answered.add(page.headers["X-Upstream"])
        assert answered == instances  # each instance knew the person signed in through the other
        cookie = "; ".join(f"{name}={value}" for name, value in client.cookies.items())
        socket = proxy.url.replace("http", "ws") + "/sessions/no-such-session/ws"
        ours = [socket_answer(socket, {"Cookie": cookie, "Origin": proxy.url}) for _ in range(4)]
        # Past the origin check on both (no such session: 404, as its page), where until now it was refused (403).
        assert {status for status, _ in ours} == {404} and {upstream for _, upstream in ours} == instances, ours
        elsewhere = [socket_answer(socket, {"Cookie": cookie, "Origin": "http://evil.example"}) for _ in range(2)]
        assert {status for status, _ in elsewhere} == {403}, elsewhere
