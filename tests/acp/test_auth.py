"""Sign-in methods (webclient.acp.auth) and how errors read (webclient.acp.jsonrpc.error_text)."""

from __future__ import annotations

from typing import Any

import pytest

from webclient.acp import auth_status
from webclient.acp.auth import sign_in_methods
from webclient.acp.jsonrpc import RpcError, error_text
from webclient.session.agent_auth import Account, AuthStatus, EnvVar


def test_each_auth_method_type_is_read_and_only_agent_methods_are_buttons(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SET_KEY", "x")
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    raw: list[Any] = [
        {"id": "oauth", "name": "Log in with Google"},
        {
            "id": "key",
            "name": "Use Gemini API key",
            "description": "Requires setting the `GEMINI_API_KEY` environment variable",
        },
        {"id": "meta", "name": "Meta", "_meta": {"envVars": ["META_TOKEN_X"], "other": "NOT_THIS_ONE"}},
        {
            "id": "env",
            "type": "env_var",
            "name": "Env",
            "vars": [{"name": "SET_KEY", "label": "Key", "secret": False}, {"name": "NO_KEY", "optional": True}],
        },
        {"id": "term", "type": "terminal", "name": "Terminal", "args": ["--login", 3], "env": {"A": "b c"}},
        {"id": "qr", "type": "qr-code", "name": "QR"},
        {"name": "no id"},
        "junk",
    ]
    methods = sign_in_methods(raw)
    assert [(m.id, m.type, m.button) for m in methods] == [
        ("oauth", "agent", True),
        ("key", "agent", True),
        ("meta", "agent", True),
        ("env", "env_var", False),
        ("term", "terminal", False),
        ("qr", "qr-code", False),
    ]
    assert methods[0].env_vars == ()
    assert methods[1].env_vars == (EnvVar("GEMINI_API_KEY"),) and not methods[1].env_vars[0].is_set
    assert [v.name for v in methods[2].env_vars] == ["META_TOKEN_X"]
    assert methods[3].env_vars == (EnvVar("SET_KEY", "Key", False, False), EnvVar("NO_KEY", None, True, True))
    assert [v.is_set for v in methods[3].env_vars] == [True, False]
    assert methods[4].terminal_command(["/bin/agent", "--acp"]) == "A='b c' /bin/agent --acp --login"


def test_v2_methods_name_their_id_method_id_and_terminal_ones_run_the_agents_argv_with_their_args() -> None:
    raw: list[Any] = [
        {"methodId": "login", "type": "terminal", "name": "Log in", "args": ["--login"], "env": {"MODE": "tty"}},
        {"methodId": "oauth", "type": "agent", "name": "Browser"},
        {"methodId": "key", "type": "env_var", "name": "Key", "vars": [{"name": "SOME_KEY"}]},
        {"methodId": "", "id": "v1-too", "name": "Both"},
    ]
    methods = sign_in_methods(raw)
    assert [(m.id, m.type, m.button, m.in_terminal) for m in methods] == [
        ("login", "terminal", False, True),
        ("oauth", "agent", True, False),
        ("key", "env_var", False, False),  # kept, shown as instructions
        ("v1-too", "agent", True, False),
    ]
    assert methods[0].terminal_argv(["/bin/agent", "--acp"]) == ["/bin/agent", "--acp", "--login"]
    assert methods[0].env == (("MODE", "tty"),)
    assert methods[1].may_open_browser and not methods[0].may_open_browser and not methods[2].may_open_browser


def test_auth_status_in_both_forms_is_read_for_display_only() -> None:
    assert auth_status.advertised({"auth": {"status": {}}}) and not auth_status.advertised({"auth": {"logout": {}}})
    said = {
        "state": "authenticated",
        "accounts": [
            {"label": "Claude Max", "email": "me@example.com", "organization": "Org", "active": True},
            {"email": "no label: left out"},
            "junk",
        ],
    }
    assert auth_status.read(said) == AuthStatus(
        "authenticated", (Account("Claude Max", "me@example.com · Org", active=True),)
    )
    assert auth_status.read({"state": "something-new"}) == AuthStatus("unknown")
    assert auth_status.read({"state": "unauthenticated"}).words == "Not signed in"  # type: ignore[union-attr]
    claude = {"authStatus": {"kind": "account", "label": "Claude Pro", "account": {"email": "a@b.c"}}}
    assert auth_status.read(claude) == AuthStatus("authenticated", (Account("Claude Pro", "a@b.c", active=True),))
    assert auth_status.read({"authStatus": {"kind": "none", "label": "Not logged in"}}) == AuthStatus("unauthenticated")
    key = {"authStatus": {"kind": "api_key", "label": "Anthropic API key", "detail": "env"}}
    assert auth_status.read(key) == AuthStatus("authenticated", (Account("Anthropic API key", "env", active=True),))
    assert auth_status.read({"authStatus": "junk"}) is None and auth_status.read(None) is None


def test_a_description_without_environment_words_names_no_variable() -> None:
    (method,) = sign_in_methods([{"id": "x", "name": "X", "description": "Uses the HTTP_API of MY_SERVICE"}])
    assert method.env_vars == ()


@pytest.mark.parametrize(
    ("message", "data", "text"),
    [
        ("Internal error", {"message": "OPENAI_API_KEY is not set"}, "Internal error: OPENAI_API_KEY is not set"),
        (
            "Internal error",
            {"details": "Cannot enable privileged approval modes in an untrusted folder."},
            "Internal error: Cannot enable privileged approval modes in an untrusted folder.",
        ),
        ("Authentication required", "Gemini API key is missing", "Authentication required: Gemini API key is missing"),
        ("Internal error", None, "Internal error"),
        ("Same", "Same", "Same"),
        ("Odd", {"code": 7}, 'Odd: {"code": 7}'),
    ],
)
def test_error_text_shows_what_data_holds(message: str, data: Any, text: str) -> None:
    assert error_text(message, data) == text
    assert RpcError.from_json({"code": -32603, "message": message, "data": data}).text == text


def test_error_text_without_a_message() -> None:
    assert error_text(" ", None) == "Error"


def test_error_text_bounds_big_data() -> None:
    text = error_text("Internal error", {"stack": "x" * 10_000})
    assert len(text) < 600 and text.endswith("…")


def test_env_var_methods_with_vars_and_api_key_methods_take_a_key_and_only_logins_may_open_a_browser() -> None:
    raw: list[Any] = [
        {"id": "chatgpt", "name": "Login with ChatGPT"},
        {"id": "openai-api-key", "type": "env_var", "name": "Use OPENAI_API_KEY", "vars": [{"name": "OPENAI_API_KEY"}]},
        {"id": "gemini-api-key", "name": "Gemini API key", "_meta": {"api-key": {"provider": "gemini"}}},
        {"id": "acme", "name": "Acme key", "_meta": {"api-key": {"provider": "Acme Cloud"}}},
        {"id": "named", "name": "Key", "description": "Set `MY_KEY` in the environment", "_meta": {"api-key": {}}},
        {"id": "vertex-ai", "name": "Vertex AI"},
        {"id": "bare", "type": "env_var", "name": "No vars"},
    ]
    methods = sign_in_methods(raw)
    assert [m.takes_key for m in methods] == [False, True, True, True, True, False, False]
    assert [[v.name for v in m.env_vars] for m in methods[1:5]] == [
        ["OPENAI_API_KEY"],
        ["GEMINI_API_KEY"],
        ["ACME_CLOUD_API_KEY"],
        ["MY_KEY"],
    ]
    assert [m.id for m in methods if m.may_open_browser] == ["chatgpt"]
