"""The page's actions over its web socket: every action a form or button of the templates sends has a handler in
the socket's table, and the table handles nothing the page never sends."""

from __future__ import annotations

import re

from tests.support.servers import ROOT
from webclient.web.live.session_socket import ACTIONS

SENT = re.compile(r'"action": "(\w+)"|name="action" value="(\w+)"')
"""An action in ``hx-vals`` (buttons) or in a hidden ``action`` field (forms)."""


def test_the_actions_the_templates_send_are_the_socket_table() -> None:
    sources = [*(ROOT / "templates").glob("*.html"), ROOT / "webclient/render/message_docs.py"]  # and a long message's
    sent = {first or second for source in sources for first, second in SENT.findall(source.read_text(encoding="utf-8"))}
    assert sent == set(ACTIONS)
