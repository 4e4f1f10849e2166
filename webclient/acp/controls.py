"""ACP wire shapes → session controls: modes, config options, slash commands, usage, title (the folds of their
``sessionUpdate`` types are entries of the table in `webclient.acp.updates`).

Spec: https://agentclientprotocol.com/protocol/session-modes, .../session-config-options,
.../slash-commands, and the ``session_info_update`` / ``usage_update`` variants of ``session/update``.
Malformed items are skipped (the schema's ``x-deserialize-skip-invalid-items``); an option of an
unknown ``type`` is ignored, as the spec asks.
"""

from __future__ import annotations

from typing import Any, cast

from webclient.acp import wire, wire_v2
from webclient.acp.wire_values import integer, items, mapping, number, string
from webclient.viewmodel.controls import (
    Choice,
    ChoiceGroup,
    Command,
    Mode,
    Model,
    SelectSetting,
    SessionControls,
    Setting,
    ToggleSetting,
    Usage,
)

# The wire's shapes, v1 or the v2 draft: what the spec promises, each value still checked where it is read.
SessionResult = wire.NewSessionResponse | wire_v2.V2NewSessionResponse
"""The answer to ``session/new`` (``session/load``, ``resume`` and ``fork`` say the same of modes and settings)."""
ConfigOption = wire.SessionConfigOption | wire_v2.V2SessionConfigOption
SelectGroup = wire.SessionConfigSelectGroup | wire_v2.V2SessionConfigSelectGroup
WireCommand = wire.AvailableCommand | wire_v2.V2Command


def modes(raw: Any) -> tuple[list[Mode], str | None]:
    """A ``SessionModeState`` (``{currentModeId, availableModes}``) as modes and the current id."""
    state = cast(wire.SessionModeState, mapping(raw))
    available = state.get("availableModes")
    if not isinstance(available, list):
        return [], None
    found = []
    for item in available:
        mode = cast(wire.SessionMode, mapping(item))
        mode_id = string(mode.get("id"))
        if mode_id is not None:
            found.append(
                Mode(id=mode_id, name=string(mode.get("name")) or mode_id, description=string(mode.get("description")))
            )
    return found, string(state.get("currentModeId"))


def models(raw: Any) -> tuple[list[Model], str | None]:
    """A ``SessionModelState`` (``{currentModelId, availableModels: [{modelId, name, description?}]}``), the
    unstable shape gemini-cli still sends, as models and the current id."""
    state = mapping(raw)  # not in the generated types: the schema no longer has it
    available = state.get("availableModels")
    if not isinstance(available, list):
        return [], None
    found = []
    for item in available:
        model = mapping(item)
        model_id = string(model.get("modelId"))
        if model_id is not None:
            found.append(
                Model(
                    id=model_id,
                    name=string(model.get("name")) or model_id,
                    description=string(model.get("description")),
                )
            )
    return found, string(state.get("currentModelId"))


def _choice(raw: Any) -> Choice | None:
    choice = cast(wire.SessionConfigSelectOption, mapping(raw))
    value = string(choice.get("value"))
    if value is None:
        return None
    return Choice(value=value, name=string(choice.get("name")) or value, description=string(choice.get("description")))


def _groups(raw: Any) -> tuple[ChoiceGroup, ...]:
    """A flat list of values becomes one unnamed group; a grouped list keeps its headings."""
    if not isinstance(raw, list):
        return ()
    if all(isinstance(item, dict) and ("group" in item or "groupId" in item) for item in raw) and raw:
        return tuple(
            ChoiceGroup(
                name=string(group.get("name")) or str(group.get("groupId", group.get("group"))),
                choices=tuple(c for c in map(_choice, items(group.get("options"))) if c is not None),
            )
            for group in cast(list[SelectGroup], raw)
        )
    return (ChoiceGroup(name=None, choices=tuple(c for c in map(_choice, raw) if c is not None)),)


def setting(raw: Any) -> Setting | None:
    """One ``SessionConfigOption`` (v1 names it ``id``, the v2 draft ``configId``), or None when it is malformed or
    of a type we do not know."""
    if not isinstance(raw, dict):
        return None
    option = cast(ConfigOption, raw)
    option_id = string(option.get("configId", option.get("id")))
    if option_id is None:
        return None
    common: dict[str, Any] = {
        "id": option_id,
        "name": string(option.get("name")) or option_id,
        "description": string(option.get("description")),
        "category": string(option.get("category")),
    }
    current, kind = option.get("currentValue"), option.get("type")
    if kind == "select" and isinstance(current, str):
        return SelectSetting(current=current, groups=_groups(option.get("options")), **common)
    if kind == "boolean" and isinstance(current, bool):
        return ToggleSetting(current=current, **common)
    return None


def settings(raw: Any) -> list[Setting]:
    """A ``configOptions`` array, in the agent's order (its order is its priority)."""
    return [s for s in map(setting, items(raw)) if s is not None]


def commands(raw: Any) -> list[Command]:
    """``availableCommands``: v1's commands, and the v2 draft's ``{type: "command"}`` ones; a command of another
    ``type`` shows as a plain command (its name and description), an input of another type as none."""
    found = []
    for item in items(raw):
        command = cast(WireCommand, mapping(item))
        name = (string(command.get("name")) or "").strip().lstrip("/").strip()
        if name:
            given = mapping(command.get("input"))
            hint = string(given.get("hint")) if given.get("type", "text") == "text" else None
            found.append(Command(name=name, description=string(command.get("description")) or "", hint=hint))
    return found


def usage(update: wire.UsageUpdate) -> Usage | None:
    used, size = integer(update.get("used")), integer(update.get("size"))
    if used is None or size is None:
        return None
    cost = mapping(update.get("cost"))
    amount = number(cost.get("amount"))
    return Usage(
        used=max(0, used),
        size=max(0, size),
        cost=float(amount) if amount is not None else None,
        currency=string(cost.get("currency")),
    )


def apply_session_result(controls: SessionControls, result: dict[str, Any]) -> None:
    """What ``session/new`` (or load, resume, fork) said about modes and settings."""
    said = cast(SessionResult, result)
    if "modes" in said:
        controls.set_modes(*modes(said.get("modes")))
    if "models" in said:
        controls.set_models(*models(said.get("models")))
    if "configOptions" in said:
        controls.set_settings(settings(said.get("configOptions")))


def commands_update(
    controls: SessionControls, update: wire.AvailableCommandsUpdate | wire_v2.V2AvailableCommandsUpdate
) -> bool:
    controls.set_commands(commands(update.get("availableCommands")))
    return True


def current_mode_update(controls: SessionControls, update: wire.CurrentModeUpdate) -> bool:
    # The schema says currentModeId; the prose example of the modes page says modeId.
    mode_id = string(update.get("currentModeId")) or string(update.get("modeId"))
    if mode_id is None:
        return False
    controls.set_current_mode(mode_id)
    return True


def config_option_update(
    controls: SessionControls, update: wire.ConfigOptionUpdate | wire_v2.V2ConfigOptionUpdate
) -> bool:
    controls.set_settings(settings(update.get("configOptions")))
    return True


def session_info_update(controls: SessionControls, update: wire.SessionInfoUpdate) -> bool:
    if "title" in update:  # omitted: unchanged; null: cleared
        controls.set_title(string(update.get("title")))
    return True


def usage_update(controls: SessionControls, update: wire.UsageUpdate) -> bool:
    found = usage(update)
    if found is None:
        return False
    controls.set_usage(found)
    return True
