"""ACP wire shapes → session controls: modes, config options, slash commands, usage, title (the folds of their
``sessionUpdate`` types are entries of the table in `webclient.acp.updates`).

Spec: https://agentclientprotocol.com/protocol/session-modes, .../session-config-options,
.../slash-commands, and the ``session_info_update`` / ``usage_update`` variants of ``session/update``.
Malformed items are skipped (the schema's ``x-deserialize-skip-invalid-items``); an option of an
unknown ``type`` is ignored, as the spec asks.
"""

from __future__ import annotations

from typing import Any

from webclient.acp.wire_values import integer, items, string
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


def modes(raw: Any) -> tuple[list[Mode], str | None]:
    """A ``SessionModeState`` (``{currentModeId, availableModes}``) as modes and the current id."""
    if not isinstance(raw, dict) or not isinstance(raw.get("availableModes"), list):
        return [], None
    found = [
        Mode(
            id=item["id"],
            name=string(item.get("name")) or item["id"],
            description=string(item.get("description")),
        )
        for item in raw["availableModes"]
        if isinstance(item, dict) and isinstance(item.get("id"), str)
    ]
    return found, string(raw.get("currentModeId"))


def models(raw: Any) -> tuple[list[Model], str | None]:
    """A ``SessionModelState`` (``{currentModelId, availableModels: [{modelId, name, description?}]}``), the
    unstable shape gemini-cli still sends, as models and the current id."""
    if not isinstance(raw, dict) or not isinstance(raw.get("availableModels"), list):
        return [], None
    found = [
        Model(
            id=item["modelId"],
            name=string(item.get("name")) or item["modelId"],
            description=string(item.get("description")),
        )
        for item in raw["availableModels"]
        if isinstance(item, dict) and isinstance(item.get("modelId"), str)
    ]
    return found, string(raw.get("currentModelId"))


def _choice(raw: Any) -> Choice | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("value"), str):
        return None
    return Choice(
        value=raw["value"],
        name=string(raw.get("name")) or raw["value"],
        description=string(raw.get("description")),
    )


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
            for group in raw
        )
    return (ChoiceGroup(name=None, choices=tuple(c for c in map(_choice, raw) if c is not None)),)


def setting(raw: Any) -> Setting | None:
    """One ``SessionConfigOption`` (v1 names it ``id``, the v2 draft ``configId``), or None when it is malformed or
    of a type we do not know."""
    if not isinstance(raw, dict) or not isinstance(option_id := raw.get("configId", raw.get("id")), str):
        return None
    common: dict[str, Any] = {
        "id": option_id,
        "name": string(raw.get("name")) or option_id,
        "description": string(raw.get("description")),
        "category": string(raw.get("category")),
    }
    current = raw.get("currentValue")
    if raw.get("type") == "select" and isinstance(current, str):
        return SelectSetting(current=current, groups=_groups(raw.get("options")), **common)
    if raw.get("type") == "boolean" and isinstance(current, bool):
        return ToggleSetting(current=current, **common)
    return None


def settings(raw: Any) -> list[Setting]:
    """A ``configOptions`` array, in the agent's order (its order is its priority)."""
    if not isinstance(raw, list):
        return []
    return [s for s in map(setting, raw) if s is not None]


def commands(raw: Any) -> list[Command]:
    """``availableCommands``: v1's commands, and the v2 draft's ``{type: "command"}`` ones; a command of another
    ``type`` shows as a plain command (its name and description), an input of another type as none."""
    found = []
    for item in items(raw):
        name = item.get("name") if isinstance(item, dict) else None
        name = name.strip().lstrip("/").strip() if isinstance(name, str) else ""
        if name:
            given = item.get("input")
            typed = isinstance(given, dict) and given.get("type", "text") == "text"
            hint = string(given.get("hint")) if isinstance(given, dict) and typed else None
            found.append(Command(name=name, description=string(item.get("description")) or "", hint=hint))
    return found


def usage(raw: dict[str, Any]) -> Usage | None:
    used, size = integer(raw.get("used")), integer(raw.get("size"))
    if used is None or size is None:
        return None
    cost = raw.get("cost")
    amount = cost.get("amount") if isinstance(cost, dict) else None
    return Usage(
        used=max(0, used),
        size=max(0, size),
        cost=float(amount) if isinstance(amount, int | float) and not isinstance(amount, bool) else None,
        currency=string(cost.get("currency")) if isinstance(cost, dict) else None,
    )


def apply_session_result(controls: SessionControls, result: dict[str, Any]) -> None:
    """What ``session/new`` (or load, resume, fork) said about modes and settings."""
    if "modes" in result:
        controls.set_modes(*modes(result["modes"]))
    if "models" in result:
        controls.set_models(*models(result["models"]))
    if "configOptions" in result:
        controls.set_settings(settings(result["configOptions"]))


def commands_update(controls: SessionControls, update: dict[str, Any]) -> bool:
    controls.set_commands(commands(update.get("availableCommands")))
    return True


def current_mode_update(controls: SessionControls, update: dict[str, Any]) -> bool:
    # The schema says currentModeId; the prose example of the modes page says modeId.
    mode_id = string(update.get("currentModeId")) or string(update.get("modeId"))
    if mode_id is None:
        return False
    controls.set_current_mode(mode_id)
    return True


def config_option_update(controls: SessionControls, update: dict[str, Any]) -> bool:
    controls.set_settings(settings(update.get("configOptions")))
    return True


def session_info_update(controls: SessionControls, update: dict[str, Any]) -> bool:
    if "title" in update:  # omitted: unchanged; null: cleared
        controls.set_title(string(update["title"]))
    return True


def usage_update(controls: SessionControls, update: dict[str, Any]) -> bool:
    found = usage(update)
    if found is None:
        return False
    controls.set_usage(found)
    return True
