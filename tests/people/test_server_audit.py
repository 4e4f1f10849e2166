"""The server's audit log keeps what belongs to no session (token mode here, whose one person is an admin; the
OpenID sign-ins are in tests/browser/test_team_browser.py): each sign-in, sign-out and Revoke, and each permission
rule made or deleted, listed on /audit and in its exports."""

from __future__ import annotations

import json
import re

import httpx

from tests.support.servers import Server, ServerFactory
from tests.support.urls import URLS, at
from webclient.people.person import LOCAL

HTML = {"Accept": "text/html,application/xhtml+xml"}


def sign_in(server: Server, user_agent: str) -> str:
    """Open the sign-in URL as a browser would: ``name=value`` of the cookie it gets."""
    response = httpx.get(server.sign_in_url("/"), headers={"User-Agent": user_agent}, follow_redirects=False)
    assert response.status_code == 303, response.text
    return response.headers["set-cookie"].split(";", 1)[0]


def post(server: Server, cookie: str, path: str, data: dict[str, str] | None = None) -> httpx.Response:
    headers = {"Cookie": cookie, "Origin": server.url}
    response = httpx.post(server.url + path, headers=headers, data=data, follow_redirects=False)
    assert response.status_code == 303, response.text[:300]
    return response


def test_sign_ins_sign_outs_revokes_and_rules_are_on_the_servers_audit_log(start_server: ServerFactory) -> None:
    server = start_server()
    laptop, phone = sign_in(server, "my laptop"), sign_in(server, "the lost phone")
    post(server, laptop, URLS.for_("rules"), {"decision": "deny", "tool_kind": "execute", "command_pattern": "rm *"})
    rules = httpx.get(at(server.url, "rules"), headers={**HTML, "Cookie": laptop}).text
    rule_id = re.findall(r'data-rule-id="(\d+)"', rules)[0]
    post(server, laptop, URLS.for_("delete_rule"), {"rule_id": rule_id})
    people = httpx.get(at(server.url, "people"), headers={**HTML, "Cookie": laptop}).text
    row = next(row for row in people.split("<tr data-signin=")[1:] if "the lost phone" in row)
    phone_id = re.findall(r'action="/admin/signins/([0-9a-f]{64})/revoke"', row)[0]
    post(server, laptop, URLS.for_("revoke_signin", signin_id=phone_id))
    post(server, laptop, URLS.for_("revoke_signin", signin_id=phone_id))  # one gone already: nothing more on record
    refused = httpx.get(server.url + "/", headers={**HTML, "Cookie": phone})
    assert refused.status_code == 401
    post(server, laptop, URLS.for_("sign_out"))

    admin = server.http()
    lines = [json.loads(line) for line in admin.get(URLS.for_("audit", format="jsonl")).text.splitlines()]
    actions = [line["action"] for line in lines]
    assert actions == ["sign-in", "sign-in", "rule", "delete-rule", "revoke-signin", "sign-out"]
    assert {line["person"] for line in lines} == {LOCAL.id} and all(line["session"] is None for line in lines)
    assert lines[0]["detail"] == {"method": "token"}
    assert lines[2]["detail"] == lines[3]["detail"]
    assert lines[2]["detail"]["decision"] == "deny" and "rm *" in lines[2]["detail"]["what"]
    assert lines[4]["detail"]["of"] == LOCAL.id
    page = admin.get(URLS.for_("audit"), headers=HTML).text
    for action in ("sign-in", "sign-out", "revoke-signin", "rule", "delete-rule"):
        assert f'data-role="audit-row" data-action="{action}"' in page
    assert "sign-out" in admin.get(URLS.for_("audit", format="csv")).text
