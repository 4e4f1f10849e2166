"""The demo agent's session furniture: slash commands, modes and config options, usage and title updates.

Driven as a real subprocess (clients in ``tests/demo_clients.py``); what the agent sends is checked against the
official ACP v1 schema (``tests/support/schema``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp.exceptions import RequestError

from demo_agent import make_sample_workspace
from demo_agent.capabilities import ClientCapabilities as DemoCapabilities
from demo_agent.scenarios import SCENARIOS
from demo_agent.turn import DOUBLE_CHECK
from tests.support.acp_schema import validate
from tests.support.demo_clients import (
    BOOLEAN_OPTIONS,
    TARGET,
    RawSession,
    RecordingClient,
    prompt,
    raw_agent,
    raw_prompt,
    typed_session,
)

INVALID_PARAMS = -32602


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_sample_workspace(tmp_path)


def option(options: list[dict[str, Any]], config_id: str) -> dict[str, Any]:
    return next(o for o in options if o["id"] == config_id)


def all_valid(raw: RawSession) -> None:
    for notification in raw.notifications:
        validate(notification, "SessionNotification")


async def invalid(raw: RawSession, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Send a request that must fail with InvalidParams; its error data."""
    with pytest.raises(RequestError) as failure:
        await raw.conn.send_request(method, {"sessionId": raw.session_id} | params)
    assert failure.value.code == INVALID_PARAMS
    return failure.value.data if isinstance(failure.value.data, dict) else {}


def test_boolean_config_capability_must_be_an_object() -> None:
    assert DemoCapabilities.from_wire(BOOLEAN_OPTIONS).boolean_config_options
    unsupported: list[dict[str, Any]] = [{"session": {"configOptions": {"boolean": True}}}, {"session": {}}, {}]
    for caps in unsupported:
        assert not DemoCapabilities.from_wire(caps).boolean_config_options


@pytest.mark.asyncio
async def test_initialize_and_new_session_offer_prompt_content_modes_and_config(workspace: Path) -> None:
    async with raw_agent(workspace) as raw:
        await raw.wait_for("available_commands_update")
    validate(raw.initialized, "InitializeResponse")
    validate(raw.created, "NewSessionResponse")
    prompts = raw.initialized["agentCapabilities"]["promptCapabilities"]
    assert prompts == {"image": True, "audio": True, "embeddedContext": True}

    modes = raw.created["modes"]
    assert modes["currentModeId"] == "ask"
    assert [m["id"] for m in modes["availableModes"]] == ["ask", "code", "plan"]
    assert all(m["description"] for m in modes["availableModes"])

    options = raw.created["configOptions"]
    assert [o["id"] for o in options] == ["mode", "model", "thought_level"]  # no boolean: not advertised
    mode = option(options, "mode")
    assert mode["category"] == "mode" and mode["currentValue"] == "ask"
    assert [v["value"] for v in mode["options"]] == [m["id"] for m in modes["availableModes"]]
    model = option(options, "model")
    assert model["category"] == "model" and [g["name"] for g in model["options"]] == ["Fast", "Thorough"]
    values = [v for group in model["options"] for v in group["options"]]
    assert model["currentValue"] in {v["value"] for v in values} and all(v["description"] for v in values)
    thinking = option(options, "thought_level")
    assert thinking["category"] == "thought_level" and all("value" in v for v in thinking["options"])


@pytest.mark.asyncio
async def test_every_scenario_is_announced_as_a_command_after_session_new(workspace: Path) -> None:
    async with raw_agent(workspace) as raw:
        [announced] = await raw.wait_for("available_commands_update")
        all_valid(raw)
    commands = {c["name"]: c for c in announced["availableCommands"]}
    assert set(commands) == set(SCENARIOS)
    assert all(c["description"] for c in commands.values())
    assert commands["modes"]["input"]["hint"]
    assert {name for name, c in commands.items() if "input" in c} == {
        s.name for s in SCENARIOS.values() if s.hint is not None
    }


@pytest.mark.asyncio
async def test_set_mode_answers_and_sends_the_mode_and_the_synced_config(workspace: Path) -> None:
    async with raw_agent(workspace) as raw:
        assert await raw.conn.send_request("session/set_mode", {"sessionId": raw.session_id, "modeId": "code"}) == {}
        [mode] = await raw.wait_for("current_mode_update")
        [config] = await raw.wait_for("config_option_update")
        assert mode["currentModeId"] == "code"
        assert option(config["configOptions"], "mode")["currentValue"] == "code"

        error = await invalid(raw, "session/set_mode", {"modeId": "yolo"})
        assert "modeId" in error

        # Setting the mode as a config option moves the modes too.
        result = await raw.conn.send_request(
            "session/set_config_option", {"sessionId": raw.session_id, "configId": "mode", "value": "plan"}
        )
        validate(result, "SetSessionConfigOptionResponse")
        assert option(result["configOptions"], "mode")["currentValue"] == "plan"
        modes = await raw.wait_for("current_mode_update", 2)
        assert modes[-1]["currentModeId"] == "plan"
        all_valid(raw)


@pytest.mark.asyncio
async def test_set_config_option_validates_and_answers_the_complete_state(workspace: Path) -> None:
    async with raw_agent(workspace) as raw:
        params = {"sessionId": raw.session_id, "configId": "model", "value": "swift"}
        result = await raw.conn.send_request("session/set_config_option", params)
        validate(result, "SetSessionConfigOptionResponse")
        assert [o["id"] for o in result["configOptions"]] == ["mode", "model", "thought_level"]
        assert option(result["configOptions"], "model")["currentValue"] == "swift"

        assert "configId" in await invalid(raw, "session/set_config_option", {"configId": "colour", "value": "red"})
        assert "value" in await invalid(raw, "session/set_config_option", {"configId": "model", "value": "turbo"})
        assert "value" in await invalid(
            raw, "session/set_config_option", {"configId": "thought_level", "type": "boolean", "value": True}
        )
        # Not advertised by this client, so there is no such option.
        assert "configId" in await invalid(
            raw, "session/set_config_option", {"configId": "verbose", "type": "boolean", "value": True}
        )
        unknown = {"sessionId": "nope", "configId": "model", "value": "swift"}
        with pytest.raises(RequestError):
            await raw.conn.send_request("session/set_config_option", unknown)

        # Failed requests changed nothing.
        result = await raw.conn.send_request(
            "session/set_config_option", {"sessionId": raw.session_id, "configId": "thought_level", "value": "off"}
        )
        assert option(result["configOptions"], "model")["currentValue"] == "swift"
        assert option(result["configOptions"], "thought_level")["currentValue"] == "off"
        assert not raw.of("current_mode_update")  # the mode never changed


@pytest.mark.asyncio
async def test_verbose_is_a_boolean_option_only_for_clients_that_render_booleans(workspace: Path) -> None:
    async with raw_agent(workspace, capabilities=BOOLEAN_OPTIONS) as raw:
        validate(raw.created, "NewSessionResponse")
        verbose = option(raw.created["configOptions"], "verbose")
        assert verbose["type"] == "boolean" and verbose["currentValue"] is False and verbose["description"]
        set_verbose = {"sessionId": raw.session_id, "configId": "verbose", "type": "boolean"}
        result = await raw.conn.send_request("session/set_config_option", set_verbose | {"value": True})
        validate(result, "SetSessionConfigOptionResponse")
        assert option(result["configOptions"], "verbose")["currentValue"] is True
        assert "value" in await invalid(raw, "session/set_config_option", set_verbose | {"value": "yes"})

        assert await raw_prompt(raw.conn, raw.session_id, "plan") == {"stopReason": "end_turn"}
        text = "".join(u["content"]["text"] for u in raw.of("agent_message_chunk"))
        assert text.splitlines()[-1].startswith("*Verbose:* I ran `plan` in **Ask** mode")
        assert "× `plan`" in text.splitlines()[-1]


@pytest.mark.asyncio
async def test_code_mode_edits_without_asking(workspace: Path) -> None:
    client = RecordingClient(answer="reject-once")
    async with typed_session(client, workspace) as (conn, session_id):
        await conn.set_session_mode(session_id=session_id, mode_id="code")
        assert await prompt(conn, session_id, "edit") == "end_turn"
    assert client.permissions == []
    assert "cannot divide by zero" in (workspace / TARGET).read_text()
    assert client.of("tool_call_update")[-1].status == "completed"
    assert "without asking" in client.message_text()


@pytest.mark.asyncio
async def test_plan_mode_only_describes_the_edit(workspace: Path) -> None:
    before = (workspace / TARGET).read_text()
    client = RecordingClient(answer="allow-once")
    async with typed_session(client, workspace) as (conn, session_id):
        await conn.set_config_option(session_id=session_id, config_id="mode", value="plan")
        assert await prompt(conn, session_id, "/edit") == "end_turn"
        assert await prompt(conn, session_id, "tour") == "end_turn"
    assert client.permissions == [] and (workspace / TARGET).read_text() == before
    assert not [u for u in client.of("tool_call") if u.kind == "edit"]
    text = client.message_text()
    assert "```diff" in text and '+        raise ValueError("cannot divide by zero")' in text
    assert "changed nothing (plan mode)" in text  # the tour's summary
    assert any("plan mode: describe only" in e.content for e in client.of("plan")[-1].entries)


@pytest.mark.asyncio
async def test_thought_level_decides_how_much_is_thought(workspace: Path) -> None:
    thoughts: dict[str, str] = {}
    client = RecordingClient()
    async with typed_session(client, workspace) as (conn, session_id):
        for level in ("off", "low", "medium", "high"):
            await conn.set_config_option(session_id=session_id, config_id="thought_level", value=level)
            client.updates.clear()
            assert await prompt(conn, session_id, "markdown") == "end_turn"
            thoughts[level] = client.message_text("agent_thought_chunk")
            assert "## Markdown showcase" in client.message_text()
    assert thoughts["off"] == ""
    assert 0 < len(thoughts["low"]) < len(thoughts["medium"]) < len(thoughts["high"])
    assert thoughts["high"].endswith(DOUBLE_CHECK) and DOUBLE_CHECK not in thoughts["medium"]


@pytest.mark.asyncio
async def test_a_fast_model_streams_bigger_chunks(workspace: Path) -> None:
    chunks: dict[str, int] = {}
    client = RecordingClient()
    async with typed_session(client, workspace) as (conn, session_id):
        for model in ("sage", "swift-mini"):
            await conn.set_config_option(session_id=session_id, config_id="model", value=model)
            client.updates.clear()
            assert await prompt(conn, session_id, "markdown") == "end_turn"
            chunks[model] = len(client.of("agent_message_chunk"))
    assert chunks["swift-mini"] * 2 < chunks["sage"]


@pytest.mark.asyncio
async def test_modes_scenario_explains_and_switches_mode_itself(workspace: Path) -> None:
    async with raw_agent(workspace) as raw:
        assert await raw_prompt(raw.conn, raw.session_id, "/modes plan") == {"stopReason": "end_turn"}
        [mode] = raw.of("current_mode_update")
        [config] = raw.of("config_option_update")
        assert mode["currentModeId"] == "plan" and option(config["configOptions"], "mode")["currentValue"] == "plan"
        text = "".join(u["content"]["text"] for u in raw.of("agent_message_chunk"))
        assert "Switched to **Plan** mode" in text and "| Mode | **Plan**" in text and "| Thinking |" in text
        assert "session.configOptions.boolean" in text  # why there is no verbose toggle
        assert raw.of("agent_thought_chunk")

        raw.updates.clear()
        assert await raw_prompt(raw.conn, raw.session_id, "modes sideways") == {"stopReason": "end_turn"}
        assert not raw.of("current_mode_update")
        assert "There is no `sideways` mode" in "".join(u["content"]["text"] for u in raw.of("agent_message_chunk"))
        all_valid(raw)


@pytest.mark.asyncio
async def test_every_turn_ends_with_usage_and_the_first_with_a_title(workspace: Path) -> None:
    async with raw_agent(workspace) as raw:
        await raw.wait_for("available_commands_update")
        ends: list[list[str]] = []
        for words in ("/plan the next steps for me, please, in detail", "help", "markdown"):
            start = len(raw.updates)
            assert await raw_prompt(raw.conn, raw.session_id, words) == {"stopReason": "end_turn"}
            ends.append([u["sessionUpdate"] for u in raw.updates[start:]][-2:])
        all_valid(raw)
    assert ends[0] == ["session_info_update", "usage_update"]
    assert ends[1][-1] == ends[2][-1] == "usage_update" and "session_info_update" not in ends[1] + ends[2]
    [info] = raw.of("session_info_update")
    assert info["title"] == "Plan the next steps for me…" and info["updatedAt"].endswith("Z")
    usage = raw.of("usage_update")
    assert len(usage) == 3 and all(u["size"] == 200_000 and u["cost"]["currency"] == "USD" for u in usage)
    used = [u["used"] for u in usage]
    costs = [u["cost"]["amount"] for u in usage]
    assert used == sorted(set(used)) and used[2] - used[1] > used[1] - used[0]  # the long Markdown answer weighs in
    assert costs == sorted(set(costs)) and 0 < costs[0] < 0.1


@pytest.mark.asyncio
async def test_a_cancelled_turn_still_reports_usage(workspace: Path) -> None:
    async with raw_agent(workspace, answer=lambda _params: {"outcome": {"outcome": "cancelled"}}) as raw:
        assert await raw_prompt(raw.conn, raw.session_id, "edit") == {"stopReason": "cancelled"}
    assert raw.updates[-1]["sessionUpdate"] == "usage_update"
