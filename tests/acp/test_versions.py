"""ACP v1 and v2 side by side (webclient.acp.versions): what the client sends in each, checked against the official
v2 schema (SDK 2.4.0), and what it reads of each answer."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.acp_schema_v2 import validate as valid_v2
from webclient.acp.auth import sign_in_methods
from webclient.acp.connection import BASE_CAPABILITIES
from webclient.acp.elicitation import CAPABILITIES as ELICITATION
from webclient.acp.versions import DIALECTS, dialect, served_by_v1, unsupported_version

V1_CAPABILITIES: dict[str, Any] = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
    **ELICITATION,
    **BASE_CAPABILITIES,
}

# claude-agent-acp 0.101.0's answer to a v2 initialize (auth.terminal advertised), as it sent it.
CLAUDE_V2 = {
    "protocolVersion": 2,
    "info": {"name": "@agentclientprotocol/claude-agent-acp", "title": "Claude Agent", "version": "0.101.0"},
    "capabilities": {
        "session": {
            "prompt": {"image": {}, "embeddedContext": {}},
            "mcp": {"stdio": {}, "http": {}},
            "delete": {},
            "fork": {},
            "additionalDirectories": {},
        },
        "_meta": {"claudeCode": {"promptQueueing": True}, "authStatus": {}},
    },
    "authMethods": [
        {
            "description": "Use Claude subscription ",
            "name": "Claude Subscription",
            "type": "terminal",
            "args": ["--cli", "auth", "login", "--claudeai"],
            "methodId": "claude-ai-login",
        }
    ],
}


def test_a_v2_initialize_offers_only_v2_capabilities_and_is_valid() -> None:
    params = DIALECTS[2].initialize_params(V1_CAPABILITIES)
    valid_v2(params, "InitializeRequest")
    assert params["protocolVersion"] == 2 and params["info"]["name"] == "acp-webclient"
    assert set(params["capabilities"]) == {"auth", "elicitation", "_meta"}  # no fs, no terminal, no session
    assert params["capabilities"]["auth"] == {"terminal": {}}  # v1's true is v2's {}
    without_terminal = DIALECTS[2].initialize_params({**V1_CAPABILITIES, "auth": {"terminal": False}})
    assert "auth" not in without_terminal["capabilities"]
    valid_v2(without_terminal, "InitializeRequest")


def test_a_v1_initialize_is_as_before() -> None:
    params = DIALECTS[1].initialize_params(V1_CAPABILITIES)
    assert params["protocolVersion"] == 1 and params["clientCapabilities"] is V1_CAPABILITIES
    assert params["clientInfo"]["name"] == "acp-webclient"


def test_a_v2_answer_is_read_where_v2_puts_things() -> None:
    greeting = DIALECTS[2].greeting(CLAUDE_V2)
    assert greeting.info["title"] == "Claude Agent"
    assert greeting.prompt_capabilities == {"image", "embeddedContext"}
    # capabilities.session present: the baseline list/resume/close, and what it adds.
    assert greeting.session_methods == {"list", "resume", "close", "delete", "fork", "additionalDirectories"}
    assert greeting.auth_methods[0]["id"] == "claude-ai-login" and greeting.auth_methods[0]["type"] == "terminal"
    assert greeting.can_sign_out
    bare = DIALECTS[2].greeting({"protocolVersion": 2, "info": {"name": "a", "version": "1"}})
    assert bare.session_methods == frozenset() and not bare.can_sign_out


def test_a_v1_answer_is_read_where_v1_puts_things() -> None:
    greeting = DIALECTS[1].greeting(
        {
            "protocolVersion": 1,
            "agentInfo": {"name": "a"},
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": True, "audio": False},
                "sessionCapabilities": {"list": {}, "close": None},
                "auth": {"logout": {}},
            },
            "authMethods": [{"id": "x", "name": "X"}],
        }
    )
    assert greeting.session_methods == {"load", "list"} and greeting.prompt_capabilities == {"image"}
    assert greeting.can_sign_out and greeting.auth_methods == [{"id": "x", "name": "X"}]


@pytest.mark.parametrize(
    ("asked", "answered", "spoken"),
    [(2, 2, 2), (2, 1, 1), (1, 1, 1), (1, 2, 1), (2, 3, 1), (2, "2", 1), (2, True, 1), (2, None, 1)],
)
def test_the_version_spoken_is_the_one_answered_if_asked_and_known(asked: int, answered: Any, spoken: int) -> None:
    assert dialect(asked, answered).version == spoken


def test_v2_requests_per_version() -> None:
    v1, v2 = DIALECTS[1], DIALECTS[2]
    assert (v1.sign_in_method, v1.sign_out_method) == ("authenticate", "logout")
    assert (v2.sign_in_method, v2.sign_out_method) == ("auth/login", "auth/logout")
    greeting = v2.greeting(CLAUDE_V2)
    method, extra = v2.reattach(greeting) or ("", {})
    assert method == "session/resume" and v2.replays(method, extra)
    valid_v2({"sessionId": "s", "cwd": "/w", "mcpServers": [], **extra}, "ResumeSessionRequest")
    valid_v2({"methodId": "claude-ai-login"}, "LoginAuthRequest")
    valid_v2({"cwd": "/w", "mcpServers": []}, "NewSessionRequest")
    loads = v1.greeting({"agentCapabilities": {"loadSession": True}})
    assert v1.reattach(loads) == ("session/load", {}) and v1.replays("session/load", {})
    assert not v1.replays("session/resume", {})
    assert v1.reattach(v1.greeting({})) is None


def test_a_refused_version_says_what_the_agent_speaks_and_what_to_set() -> None:
    text = unsupported_version({"requested": 1, "supported": [2]}, 1)
    assert text.startswith("The agent speaks only ACP version 2; this client asked for version 1.")
    assert "WEBCLIENT_ACP_PROTOCOL=2" in text and "acp_protocol = 2" in text
    assert "another ACP version" in unsupported_version(None, 1)


def test_only_files_and_terminals_need_a_v1_initialize() -> None:
    assert served_by_v1(V1_CAPABILITIES)
    assert not served_by_v1({"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False})


def test_a_config_value_is_typed_as_each_version_asks() -> None:
    assert DIALECTS[1].config_value("plan") == {"value": "plan"}
    assert DIALECTS[1].config_value(True) == {"type": "boolean", "value": True}
    assert DIALECTS[2].config_value("plan") == {"type": "id", "value": "plan"}
    for config_id, value in (("mode", "plan"), ("web", False)):
        request = {"sessionId": "s", "configId": config_id, **DIALECTS[2].config_value(value)}
        valid_v2(request, "SetSessionConfigOptionRequest")


def test_v2_sign_in_methods_read_as_v1_ones() -> None:
    (method,) = sign_in_methods(DIALECTS[2].greeting(CLAUDE_V2).auth_methods)
    assert (method.id, method.name, method.type) == ("claude-ai-login", "Claude Subscription", "terminal")
    assert method.args == ("--cli", "auth", "login", "--claudeai")
