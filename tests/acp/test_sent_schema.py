"""The check every test server's journal goes through when it stops (`tests.support.acp_schema.sent_problems`):
it must catch what the ACP schema does not allow, per protocol version, and let valid traffic through."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from tests.support.acp_schema import schema, sent_problems


def out(message: dict[str, Any]) -> tuple[str, str]:
    return "out", json.dumps({"jsonrpc": "2.0", **message})


def into(message: dict[str, Any]) -> tuple[str, str]:
    return "in", json.dumps({"jsonrpc": "2.0", **message})


V1_HELLO = out({"id": 0, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}})


@pytest.mark.slow  # seconds each: the vendored files change only when the schemas are updated
@pytest.mark.parametrize(("version", "unstable"), [(1, False), (1, True), (2, False), (2, True)])
def test_the_official_schemas_are_valid_json_schemas(version: int, unstable: bool) -> None:
    """Checked here once, not each time a journal is (`tests.support.acp_schema`)."""
    whole = schema(version, unstable)
    jsonschema.validators.validator_for(whole).check_schema(whole)


def test_valid_v1_traffic_passes() -> None:
    lines = [
        V1_HELLO,
        into({"id": 0, "result": {"protocolVersion": 1}}),
        out({"id": 1, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}}),
        into({"id": 7, "method": "fs/read_text_file", "params": {"sessionId": "s", "path": "/tmp/a"}}),
        out({"id": 7, "result": {"content": "text"}}),
        out({"method": "session/cancel", "params": {"sessionId": "s"}}),
        out({"id": 2, "method": "_session/steering", "params": {"anything": True}}),
        out({"id": 8, "error": {"code": -32601, "message": "Method not found"}}),
    ]
    assert sent_problems(lines) == []


def test_what_the_schema_refuses_is_reported() -> None:
    lines = [
        V1_HELLO,
        into({"id": 0, "result": {"protocolVersion": 1}}),
        out({"id": 1, "method": "session/new", "params": {"mcpServers": []}}),  # no cwd
        into({"id": 9, "method": "session/request_permission", "params": {}}),
        out({"id": 9, "result": {"outcome": {"outcome": "approved"}}}),  # no such outcome
        out({"id": 3, "method": "session/frobnicate", "params": {}}),
    ]
    problems = sent_problems(lines)
    assert len(problems) == 3
    assert "NewSessionRequest" in problems[0] and "'cwd' is a required property" in problems[0]
    assert "RequestPermissionResponse" in problems[1]
    assert "has no request session/frobnicate" in problems[2]


def test_each_connection_is_checked_against_the_version_it_speaks() -> None:
    v2_hello = out(
        {"id": 0, "method": "initialize", "params": {"protocolVersion": 2, "info": {"name": "c", "version": "1"}}}
    )
    load = out({"id": 1, "method": "session/load", "params": {"sessionId": "s", "cwd": "/tmp", "mcpServers": []}})
    # The agent answered 2: v2 has no session/load.
    assert (
        "v2 schema has no request session/load"
        in sent_problems([v2_hello, into({"id": 0, "result": {"protocolVersion": 2}}), load])[0]
    )
    # The agent answered 1: the connection goes on in v1, where it is fine.
    assert sent_problems([v2_hello, into({"id": 0, "result": {"protocolVersion": 1}}), load]) == []
    # A v1-shaped initialize asking for v2 is not a valid v2 InitializeRequest.
    bad_hello = out({"id": 0, "method": "initialize", "params": {"protocolVersion": 2, "clientCapabilities": {}}})
    assert "InitializeRequest" in sent_problems([bad_hello])[0]
