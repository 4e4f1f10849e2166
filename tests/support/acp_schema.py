"""The official ACP JSON schemas (``tests/support/schema``, SDK 2.4.0) and the check of everything the client sent.

Every test server's journal holds each protocol line as it went over the wire; `sent_problems` reads the lines the
client wrote and checks each against the schema of the protocol version its connection spoke (the unstable schema:
the client advertises some unstable features, and it is a superset of the stable one).
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # no types-jsonschema in the dev extras

SCHEMAS = Path(__file__).parent / "schema"


@functools.cache
def schema(version: int = 1, unstable: bool = False) -> dict[str, Any]:
    name = "schema.unstable.json" if unstable else "schema.json"
    loaded: dict[str, Any] = json.loads((SCHEMAS / f"v{version}" / name).read_text())
    return loaded


@functools.cache
def _validator(definition: str, version: int, unstable: bool) -> Any:
    whole = schema(version, unstable)
    part = {"$defs": whole["$defs"], "$ref": f"#/$defs/{definition}"}
    # Not checked against its meta-schema here (seconds per definition, in every worker):
    # tests/acp/test_sent_schema.py checks each schema once.
    return jsonschema.validators.validator_for(whole)(part)


def validate(instance: Any, definition: str, version: int = 1, unstable: bool = False) -> None:
    """Check ``instance`` against ``definition`` of the official ACP schema; raises `jsonschema.ValidationError`."""
    _validator(definition, version, unstable).validate(instance)


@functools.cache
def _definitions(version: int) -> dict[tuple[str, str], str]:
    """(method, kind) → the definition of what the client sends for it: ``request`` and ``notification`` params
    of the methods agents serve, ``response`` results of the methods clients serve."""
    found: dict[tuple[str, str], str] = {}
    for name, definition in schema(version, unstable=True)["$defs"].items():
        method, side = definition.get("x-method"), definition.get("x-side")
        if method is None:
            continue
        if side in ("agent", "protocol") and name.endswith("Request"):
            found[method, "request"] = name
        elif side in ("agent", "protocol") and name.endswith("Notification"):
            found[method, "notification"] = name
        elif side == "client" and name.endswith("Response"):
            found[method, "response"] = name
    return found


LEGACY = {"session/set_model"}
"""Methods the client still sends though the schema dropped them: ``session/set_model`` (unstable, removed in
June 2026 for config options of category ``model``) is served by 16 of the registry's agents, Gemini CLI among
them, and sent only to an agent that offered ``models`` in its session's answer."""


def _version(value: Any) -> int:
    return value if value in (1, 2) else 1


def sent_problems(lines: Iterable[tuple[str, str]]) -> list[str]:
    """What is wrong with the lines the client sent, given one connection's or session's protocol lines in order
    (``(direction, line)``, direction ``in`` or ``out``). Empty when every line is valid.

    Extension methods (``_...``) are not in the schema and are skipped. A new connection starts at each
    ``initialize`` the client sends; it is checked against the version it asks for, and what follows against the
    version the agent answered.
    """
    problems: list[str] = []
    version = 1
    initialize_ids: set[Any] = set()
    asked: dict[Any, str] = {}  # the agent's request ids → their methods
    for direction, line in lines:
        try:
            message = json.loads(line)
        except ValueError:
            continue  # the agent's garbage, kept in the journal as it came
        if not isinstance(message, dict):
            continue
        if direction == "in":
            if isinstance(message.get("method"), str) and "id" in message:
                asked[json.dumps(message["id"])] = message["method"]
            elif message.get("id") in initialize_ids and isinstance(message.get("result"), dict):
                version = _version(message["result"].get("protocolVersion"))
            continue
        if direction != "out":
            continue
        method = message.get("method")
        if method == "initialize":
            params = message.get("params")
            version = _version(params.get("protocolVersion") if isinstance(params, dict) else None)
            initialize_ids.add(message.get("id"))
            asked.clear()
        problem = _problem(message, version, asked)
        if problem:
            problems.append(f"v{version} {line[:300]}\n  {problem}")
    return problems


def _problem(message: dict[str, Any], version: int, asked: dict[Any, str]) -> str | None:
    if message.get("jsonrpc") != "2.0":
        return "no jsonrpc 2.0"
    method = message.get("method")
    if isinstance(method, str):
        kind = "request" if "id" in message else "notification"
        instance = message.get("params")
    else:
        method = asked.get(json.dumps(message.get("id")))
        if "error" in message:
            return _checked(message["error"], "Error", version)
        kind, instance = "response", message.get("result")
    if method is None or method.startswith("_") or method in LEGACY:
        return None  # an answer to a request never seen (the journal was cut), an extension, or a legacy method
    definition = _definitions(version).get((method, kind))
    if definition is None:
        return f"the v{version} schema has no {kind} {method}"
    return _checked(instance, definition, version)


def _checked(instance: Any, definition: str, version: int) -> str | None:
    try:
        validate(instance, definition, version, unstable=True)
    except jsonschema.ValidationError as error:
        return f"not a valid {definition}: {error.message} at {list(error.absolute_path)}"
    return None


def journal_problems(data_dir: Path) -> list[str]:
    """`sent_problems` of every ACP session in the SQLite store of ``data_dir`` (none when it has no store)."""
    database = data_dir / "webclient.sqlite3"
    if not database.exists():
        return []
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        rows = connection.execute(
            "SELECT session_id, direction, body FROM journal JOIN sessions ON sessions.id = journal.session_id"
            " WHERE kind = 'protocol' AND agent_command NOT LIKE 'http%' ORDER BY session_id, seq"
        ).fetchall()  # remote agents (AAP, reached by URL) journal HTTP requests and events, not JSON-RPC
    by_session: dict[str, list[tuple[str, str]]] = {}
    for session_id, direction, body in rows:
        by_session.setdefault(session_id, []).append((direction, body))
    return [problem for lines in by_session.values() for problem in sent_problems(lines)]
