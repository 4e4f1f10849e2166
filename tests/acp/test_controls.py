"""Session controls: ACP wire shapes (``webclient.acp.controls``) → view model (``webclient.viewmodel.controls``)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.support.acp_schema import schema
from webclient.acp import controls as acp
from webclient.acp.updates import CONTROL_UPDATES, KNOWN_SESSION_UPDATES, apply_control_update
from webclient.render.rendering import Renderer
from webclient.viewmodel.controls import (
    Choice,
    ChoiceGroup,
    Command,
    ControlsPart,
    Mode,
    SelectSetting,
    SessionControls,
    ToggleSetting,
    Usage,
)


def recorded() -> tuple[SessionControls, list[ControlsPart]]:
    parts: list[ControlsPart] = []
    return SessionControls(listener=parts.append), parts


def select(option_id: str = "model", **extra: Any) -> dict[str, Any]:
    return {
        "id": option_id,
        "name": "Model",
        "type": "select",
        "currentValue": "fast",
        "options": [{"value": "fast", "name": "Fast"}, {"value": "smart", "name": "Smart", "description": "Slower"}],
        **extra,
    }


# --- modes -------------------------------------------------------------------------------------


def test_modes_reads_available_modes_and_current_id() -> None:
    found, current = acp.modes(
        {
            "currentModeId": "ask",
            "availableModes": [
                {"id": "ask", "name": "Ask", "description": "Asks first"},
                {"id": "code", "name": "Code"},
            ],
        }
    )
    assert found == [Mode(id="ask", name="Ask", description="Asks first"), Mode(id="code", name="Code")]
    assert current == "ask"


def test_modes_skips_malformed_items_and_falls_back_to_the_id_for_a_missing_name() -> None:
    found, current = acp.modes(
        {"currentModeId": 3, "availableModes": [{"id": "plan"}, {"name": "no id"}, "ask", {"id": 7}, None]}
    )
    assert found == [Mode(id="plan", name="plan")]
    assert current is None


@pytest.mark.parametrize("raw", [None, [], "modes", {"currentModeId": "ask"}, {"availableModes": {"id": "x"}}])
def test_modes_of_something_that_is_not_a_mode_state_is_empty(raw: Any) -> None:
    assert acp.modes(raw) == ([], None)


# --- settings ----------------------------------------------------------------------------------


def test_setting_select_with_a_flat_list_is_one_unnamed_group() -> None:
    found = acp.setting(select(description="Which model", category="model"))
    assert found == SelectSetting(
        id="model",
        name="Model",
        current="fast",
        groups=(
            ChoiceGroup(
                name=None,
                choices=(Choice(value="fast", name="Fast"), Choice(value="smart", name="Smart", description="Slower")),
            ),
        ),
        description="Which model",
        category="model",
    )
    assert found.type == "select"
    assert found.current_choice() == Choice(value="fast", name="Fast")


def test_setting_select_with_groups_keeps_the_headings() -> None:
    found = acp.setting(
        select(
            currentValue="opus",
            options=[
                {"group": "anthropic", "name": "Anthropic", "options": [{"value": "opus", "name": "Opus"}]},
                {"group": "local", "options": [{"value": "llama", "name": "Llama"}, {"value": 5}]},
            ],
        )
    )
    assert isinstance(found, SelectSetting)
    assert found.groups == (
        ChoiceGroup(name="Anthropic", choices=(Choice(value="opus", name="Opus"),)),
        ChoiceGroup(name="local", choices=(Choice(value="llama", name="Llama"),)),
    )
    assert [c.value for c in found.choices] == ["opus", "llama"]
    assert found.current_choice() == Choice(value="opus", name="Opus")


def test_setting_select_skips_malformed_choices_and_names_a_choice_by_its_value() -> None:
    found = acp.setting(select(options=[{"value": "fast"}, {"name": "no value"}, "smart", None, {"value": 1}]))
    assert isinstance(found, SelectSetting)
    assert found.choices == [Choice(value="fast", name="fast")]


def test_setting_select_group_with_options_that_are_not_a_list_has_no_choices() -> None:
    found = acp.setting(select(options=[{"group": "g", "name": "G", "options": {"value": "x"}}]))
    assert isinstance(found, SelectSetting)
    assert found.groups == (ChoiceGroup(name="G", choices=()),)


def test_setting_select_group_with_a_number_for_options_does_not_raise() -> None:
    found = acp.setting(select(options=[{"group": "g", "name": "G", "options": 5}]))
    assert isinstance(found, SelectSetting)
    assert found.groups == (ChoiceGroup(name="G", choices=()),)


def test_setting_select_whose_current_value_is_not_offered_has_no_current_choice() -> None:
    found = acp.setting(select(currentValue="gone"))
    assert isinstance(found, SelectSetting)
    assert found.current == "gone"
    assert found.current_choice() is None


def test_setting_boolean() -> None:
    found = acp.setting({"id": "web", "name": "Web search", "type": "boolean", "currentValue": True})
    assert found == ToggleSetting(id="web", name="Web search", current=True)
    assert found.type == "boolean"


def test_setting_missing_name_falls_back_to_the_id() -> None:
    found = acp.setting({"id": "web", "type": "boolean", "currentValue": False})
    assert found == ToggleSetting(id="web", name="web", current=False)


@pytest.mark.parametrize(
    "raw",
    [
        {"id": "x", "name": "X", "type": "slider", "currentValue": 3},  # unknown type: ignored, as the spec asks
        {"id": "x", "name": "X", "currentValue": "a", "options": []},  # no type
        {"id": "x", "name": "X", "type": "select", "currentValue": True, "options": []},
        {"id": "x", "name": "X", "type": "boolean", "currentValue": "true"},
        {"name": "X", "type": "boolean", "currentValue": True},  # no id
        {"id": 1, "name": "X", "type": "boolean", "currentValue": True},
        "model",
        None,
    ],
)
def test_setting_malformed_or_unknown_is_none(raw: Any) -> None:
    assert acp.setting(raw) is None


def test_settings_keeps_the_agents_order_and_skips_what_it_cannot_read() -> None:
    found = acp.settings(
        [
            {"id": "web", "name": "Web", "type": "boolean", "currentValue": True},
            {"id": "dial", "name": "Dial", "type": "dial", "currentValue": 3},
            "junk",
            select(),
        ]
    )
    assert [s.id for s in found] == ["web", "model"]


@pytest.mark.parametrize("raw", [None, {}, "x", 3])
def test_settings_of_a_non_list_is_empty(raw: Any) -> None:
    assert acp.settings(raw) == []


# --- commands ----------------------------------------------------------------------------------


def test_commands_reads_name_description_and_input_hint() -> None:
    found = acp.commands(
        [
            {"name": "web", "description": "Search the web", "input": {"hint": "query to search for"}},
            {"name": "plan", "description": "Make a plan"},
        ]
    )
    assert found == [
        Command(name="web", description="Search the web", hint="query to search for"),
        Command(name="plan", description="Make a plan"),
    ]


def test_commands_strips_a_leading_slash_and_whitespace() -> None:
    found = acp.commands([{"name": "/review", "description": "Review"}, {"name": "  test ", "description": "T"}])
    assert [c.name for c in found] == ["review", "test"]


def test_commands_skips_blank_and_malformed_items() -> None:
    found = acp.commands(
        [{"name": "", "description": "x"}, {"name": "   ", "description": "x"}, {"description": "x"}, {"name": 3}, "go"]
    )
    assert found == []


def test_commands_skips_a_name_that_is_only_a_slash() -> None:
    assert acp.commands([{"name": "/", "description": "x"}]) == []


def test_commands_tolerates_missing_description_and_malformed_input() -> None:
    found = acp.commands([{"name": "a", "input": "free text"}, {"name": "b", "description": 5, "input": {"hint": 1}}])
    assert found == [Command(name="a", description=""), Command(name="b", description="")]


@pytest.mark.parametrize("raw", [None, {}, "x"])
def test_commands_of_a_non_list_is_empty(raw: Any) -> None:
    assert acp.commands(raw) == []


# --- usage -------------------------------------------------------------------------------------


def test_usage_with_cost() -> None:
    found = acp.usage({"used": 1200, "size": 200_000, "cost": {"amount": 0.42, "currency": "USD"}})
    assert found == Usage(used=1200, size=200_000, cost=0.42, currency="USD")


def test_usage_with_integer_cost_is_a_float() -> None:
    found = acp.usage({"used": 1, "size": 2, "cost": {"amount": 3, "currency": "EUR"}})
    assert found is not None
    assert found.cost == 3.0
    assert isinstance(found.cost, float)


@pytest.mark.parametrize("cost", [None, "1.0", {"currency": "USD"}, {"amount": "0.4", "currency": "USD"}])
def test_usage_without_a_readable_cost_has_none(cost: Any) -> None:
    raw: dict[str, Any] = {"used": 10, "size": 100}
    if cost is not None:
        raw["cost"] = cost
    found = acp.usage(raw)
    assert found is not None
    assert (found.used, found.size, found.cost) == (10, 100, None)


def test_usage_rejects_a_boolean_cost_amount() -> None:
    found = acp.usage({"used": 10, "size": 100, "cost": {"amount": True, "currency": "USD"}})
    assert found is not None
    assert found.cost is None


@pytest.mark.parametrize(
    "raw",
    [
        {"used": True, "size": 100},
        {"used": 10, "size": False},
        {"used": 1.5, "size": 100},
        {"used": "10", "size": 100},
        {"size": 100},
        {"used": 10},
        {},
    ],
)
def test_usage_rejects_bools_and_non_integers(raw: dict[str, Any]) -> None:
    assert acp.usage(raw) is None


def test_usage_clamps_negative_counts_to_zero() -> None:
    assert acp.usage({"used": -5, "size": -1}) == Usage(used=0, size=0)


# --- apply_session_result ----------------------------------------------------------------------


def test_apply_session_result_sets_modes_and_settings() -> None:
    controls, parts = recorded()
    acp.apply_session_result(
        controls,
        {
            "sessionId": "s1",
            "modes": {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}]},
            "configOptions": [select()],
        },
    )
    assert controls.modes == [Mode(id="ask", name="Ask")]
    assert controls.current_mode == "ask"
    assert [s.id for s in controls.settings] == ["model"]
    assert parts == ["controls", "controls"]


def test_apply_session_result_without_modes_or_settings_changes_nothing() -> None:
    controls, parts = recorded()
    controls.set_settings(acp.settings([select()]))
    parts.clear()
    acp.apply_session_result(controls, {"sessionId": "s1"})
    assert [s.id for s in controls.settings] == ["model"]
    assert parts == []


# --- apply_control_update ----------------------------------------------------------------------


def test_apply_available_commands_update_replaces_the_commands() -> None:
    controls, parts = recorded()
    update = {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "a", "description": "A"}]}
    assert apply_control_update(controls, update)
    update = {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "b", "description": "B"}]}
    assert apply_control_update(controls, update)
    assert controls.commands == [Command(name="b", description="B")]
    assert parts == ["commands", "commands"]


@pytest.mark.parametrize("key", ["currentModeId", "modeId"])
def test_apply_current_mode_update_accepts_both_spellings(key: str) -> None:
    controls, parts = recorded()
    controls.set_modes([Mode("ask", "Ask"), Mode("code", "Code")], "ask")
    parts.clear()
    assert apply_control_update(controls, {"sessionUpdate": "current_mode_update", key: "code"})
    assert controls.current_mode == "code"
    assert parts == ["controls"]


def test_apply_current_mode_update_without_an_id_is_not_applied() -> None:
    controls, parts = recorded()
    controls.set_modes([Mode("ask", "Ask")], "ask")
    parts.clear()
    assert not apply_control_update(controls, {"sessionUpdate": "current_mode_update", "currentModeId": 4})
    assert controls.current_mode == "ask"
    assert parts == []


def test_apply_config_option_update_replaces_all_settings() -> None:
    controls, parts = recorded()
    acp.apply_session_result(
        controls, {"configOptions": [select(), {"id": "web", "name": "Web", "type": "boolean", "currentValue": True}]}
    )
    parts.clear()
    assert apply_control_update(
        controls, {"sessionUpdate": "config_option_update", "configOptions": [select(currentValue="smart")]}
    )
    assert [s.id for s in controls.settings] == ["model"]
    model = controls.setting("model")
    assert isinstance(model, SelectSetting)
    assert model.current == "smart"
    assert controls.setting("web") is None
    assert parts == ["controls"]


def test_apply_session_info_update_sets_clears_and_leaves_the_title() -> None:
    controls, parts = recorded()
    assert apply_control_update(controls, {"sessionUpdate": "session_info_update", "title": "Fix the bug"})
    assert controls.title == "Fix the bug"
    assert apply_control_update(controls, {"sessionUpdate": "session_info_update", "updatedAt": "2025-01-01"})
    assert controls.title == "Fix the bug"  # omitted: unchanged
    assert apply_control_update(controls, {"sessionUpdate": "session_info_update", "title": None})
    assert controls.title is None  # null: cleared
    assert parts == ["status", "status"]


def test_apply_usage_update() -> None:
    controls, parts = recorded()
    update = {"sessionUpdate": "usage_update", "used": 50, "size": 100, "cost": {"amount": 1.5, "currency": "USD"}}
    assert apply_control_update(controls, update)
    assert controls.usage == Usage(used=50, size=100, cost=1.5, currency="USD")
    assert parts == ["status"]


def test_apply_malformed_usage_update_is_not_applied() -> None:
    controls, parts = recorded()
    assert not apply_control_update(controls, {"sessionUpdate": "usage_update", "used": "50", "size": 100})
    assert controls.usage is None
    assert parts == []


@pytest.mark.parametrize("kind", ["agent_message_chunk", "tool_call", "plan", "something_new", None])
def test_apply_control_update_of_another_type_returns_false(kind: str | None) -> None:
    controls, parts = recorded()
    assert not apply_control_update(controls, {"sessionUpdate": kind, "title": "x", "used": 1, "size": 2})
    assert controls.title is None
    assert controls.usage is None
    assert parts == []


def test_control_updates_are_what_apply_control_update_handles() -> None:
    assert CONTROL_UPDATES == {
        "available_commands_update",
        "current_mode_update",
        "config_option_update",
        "session_info_update",
        "usage_update",
    }


# --- SessionControls ---------------------------------------------------------------------------


def test_session_controls_listener_gets_the_part_that_changed() -> None:
    controls, parts = recorded()
    controls.set_title("t")
    controls.set_usage(Usage(1, 2))
    controls.set_modes([Mode("a", "A")], "a")
    controls.set_current_mode("a")
    controls.set_settings([])
    controls.set_commands([])
    controls.refresh("controls")
    assert parts == ["status", "status", "controls", "controls", "controls", "commands", "controls"]


def test_session_controls_default_listener_ignores_changes() -> None:
    controls = SessionControls()
    controls.set_title("t")
    assert controls.title == "t"


def test_session_controls_shows_modes_only_without_settings() -> None:
    controls = SessionControls()
    assert not controls.show_modes
    controls.set_modes([Mode("ask", "Ask")], "ask")
    assert controls.show_modes
    controls.set_settings([ToggleSetting(id="web", name="Web", current=True)])
    assert not controls.show_modes  # config options win


def test_session_controls_lookups() -> None:
    controls = SessionControls()
    toggle = ToggleSetting(id="web", name="Web", current=False)
    controls.set_modes([Mode("ask", "Ask"), Mode("code", "Code")], "ask")
    controls.set_settings([toggle])
    assert controls.mode("code") == Mode("code", "Code")
    assert controls.mode("gone") is None
    assert controls.mode(None) is None
    assert controls.setting("web") is toggle
    assert controls.setting("gone") is None


@pytest.mark.parametrize(
    ("used", "size", "fraction"), [(50, 100, 0.5), (0, 100, 0.0), (150, 100, 1.0), (10, 0, 0.0), (0, 0, 0.0)]
)
def test_usage_fraction(used: int, size: int, fraction: float) -> None:
    assert Usage(used=used, size=size).fraction == fraction


# --- KNOWN_SESSION_UPDATES ---------------------------------------------------------------------


def test_known_session_updates_cover_every_stable_v1_variant() -> None:
    variants = schema()["$defs"]["SessionUpdate"]["oneOf"]
    stable = {variant["properties"]["sessionUpdate"]["const"] for variant in variants}
    assert len(stable) == len(variants) >= 13  # SDK 2.4.0 made notice and compaction stable
    assert stable - KNOWN_SESSION_UPDATES == set()


def test_choice_is_the_new_value_a_page_picks_or_none() -> None:
    model = SelectSetting(
        id="model",
        name="Model",
        current="sage",
        groups=(ChoiceGroup(name=None, choices=(Choice("swift", "Swift"), Choice("sage", "Sage"))),),
    )
    verbose = ToggleSetting(id="verbose", name="Verbose", current=False)
    controls = SessionControls(settings=[model, verbose])
    assert controls.choice("model", "swift") == "swift"
    assert controls.choice("model", "sage") is None  # no change
    assert controls.choice("model", "gpt") is None  # not offered
    assert controls.choice("verbose", "true") is True
    assert controls.choice("verbose", "false") is None
    assert controls.choice("nope", "x") is None


def test_a_select_shows_the_agents_value_even_when_it_offers_no_such_choice() -> None:
    """Without an option for it, the browser would show the first choice as if it were the current one."""
    gone = SelectSetting(
        id="model", name="Model", current="retired <b>", groups=(ChoiceGroup(name=None, choices=(Choice("a", "A"),)),)
    )
    html = Renderer().block(
        "session.html", "controls", session=SimpleNamespace(controls=SessionControls(settings=[gone])), oob=None
    )
    assert '<option value="retired &lt;b&gt;" selected>retired &lt;b&gt;</option>' in html
    offered = SelectSetting(id="model", name="Model", current="a", groups=gone.groups)
    html = Renderer().block(
        "session.html", "controls", session=SimpleNamespace(controls=SessionControls(settings=[offered])), oob=None
    )
    assert html.count("<option") == 1 and '<option value="a" selected>' in html


def test_models_of_a_session_new_answer_give_a_model_selector_unless_a_model_setting_comes_too() -> None:
    """gemini-cli answers ``session/new`` with ``models`` (``session/set_model``, removed from the spec)."""
    controls, parts = recorded()
    models = {
        "availableModels": [
            {"modelId": "pro", "name": "Pro", "description": "Capable"},
            {"modelId": "flash"},
            {"name": "no id"},
        ],
        "currentModelId": "pro",
    }
    acp.apply_session_result(controls, {"sessionId": "s", "models": models})
    found = [(m.id, m.name, m.description) for m in controls.models]
    assert found == [("pro", "Pro", "Capable"), ("flash", "flash", None)]
    assert controls.current_model == "pro" and controls.show_models and parts == ["controls"]
    option = {"id": "m", "name": "Model", "category": "model", "type": "select", "currentValue": "a", "options": []}
    acp.apply_session_result(controls, {"models": models, "configOptions": [option]})
    assert not controls.show_models
    acp.apply_session_result(controls, {"models": models, "configOptions": [{**option, "category": "other"}]})
    assert controls.show_models


def test_v2_config_options_name_themselves_configId_and_their_groups_groupId() -> None:
    raw = {
        "configId": "model",
        "name": "Model",
        "type": "select",
        "currentValue": "fast",
        "options": [
            {"groupId": "cheap", "name": "Cheap", "options": [{"value": "fast", "name": "Fast"}]},
            {"groupId": "big", "options": [{"value": "deep", "name": "Deep"}]},
        ],
    }
    found = acp.setting(raw)
    assert isinstance(found, SelectSetting) and found.id == "model"
    assert [(g.name, [c.value for c in g.choices]) for g in found.groups] == [("Cheap", ["fast"]), ("big", ["deep"])]
    toggle = acp.setting({"configId": "web", "name": "Web", "type": "boolean", "currentValue": False})
    assert isinstance(toggle, ToggleSetting) and toggle.id == "web"


def test_v2_typed_commands_and_commands_of_another_type_show_as_plain_commands() -> None:
    found = acp.commands(
        [
            {"type": "command", "name": "review", "description": "Review", "input": {"type": "text", "hint": "a PR"}},
            {"type": "command", "name": "draw", "description": "Draw", "input": {"type": "_canvas", "hint": "no"}},
            {"type": "_macro", "name": "deploy", "description": "Deploy it"},
        ]
    )
    assert found == [
        Command(name="review", description="Review", hint="a PR"),
        Command(name="draw", description="Draw", hint=None),  # an input of another type: none taken
        Command(name="deploy", description="Deploy it"),
    ]
