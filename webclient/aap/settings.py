"""A remote agent's settings as the person chooses them: its options, and which of its server tools are enabled
and trusted. AAP v3 sends them at ``POST /sessions`` and, when changed, with the next turn (where they persist).

Server tools start disabled and untrusted, as the protocol has it: the person decides. Options are shown as the
session's settings (a select, a text, a secret that the page never gets back), tools as on/off switches.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from webclient.aap.meta import RemoteAgent
from webclient.viewmodel.controls import (
    SECRET_SET,
    Choice,
    ChoiceGroup,
    SelectSetting,
    Setting,
    TextSetting,
    ToggleSetting,
)

ENABLED = "enable:"
TRUSTED = "trust:"
OPTION = "option:"


class RemoteSettings:
    def __init__(self, agent: RemoteAgent, given: Mapping[str, str] | None = None) -> None:
        self.agent = agent
        self.options = {option.name: option.default for option in agent.options}
        self.options.update({k: v for k, v in (given or {}).items() if k in self.options})
        self.enabled: dict[str, bool] = {tool.name: False for tool in agent.tools}
        self.trusted: dict[str, bool] = {tool.name: False for tool in agent.tools}
        self.changed = False
        """Whether the server has not heard of the latest change yet (sent with the next turn)."""

    def controls(self) -> list[Setting]:
        shown: list[Setting] = []
        for option in self.agent.options:
            if option.type == "select" and option.choices:
                choices = tuple(Choice(value=c, name=c) for c in option.choices)
                shown.append(
                    SelectSetting(
                        id=OPTION + option.name,
                        name=option.title or option.name,
                        current=self.options[option.name],
                        groups=(ChoiceGroup(None, choices),),
                        description=option.description,
                    )
                )
            else:  # text, secret (whose value stays here: the page learns only whether it has one)
                value = self.options[option.name]
                shown.append(
                    TextSetting(
                        id=OPTION + option.name,
                        name=option.title or option.name,
                        current=(SECRET_SET if value else "") if option.secret else value,
                        description=option.description,
                        secret=option.secret,
                    )
                )
        for tool in self.agent.tools:
            label = tool.title or tool.name
            shown.append(ToggleSetting(ENABLED + tool.name, f"Use {label}", self.enabled[tool.name], tool.description))
            if self.enabled[tool.name]:
                shown.append(ToggleSetting(TRUSTED + tool.name, f"Run {label} without asking", self.trusted[tool.name]))
        return shown

    def set(self, setting_id: str, value: str | bool) -> bool:
        """Take a change the person made; False when the setting is not one of these."""
        if setting_id.startswith(OPTION) and setting_id.removeprefix(OPTION) in self.options:
            self.options[setting_id.removeprefix(OPTION)] = str(value)
        elif setting_id.startswith(ENABLED) and setting_id.removeprefix(ENABLED) in self.enabled:
            self.enabled[setting_id.removeprefix(ENABLED)] = value is True
        elif setting_id.startswith(TRUSTED) and setting_id.removeprefix(TRUSTED) in self.trusted:
            self.trusted[setting_id.removeprefix(TRUSTED)] = value is True
        else:
            return False
        self.changed = True
        return True

    def adopt(self, config: Any) -> None:
        """Take the settings the server's session has (``SessionInfo.agent``, when the session is taken up again):
        turns persist their overrides there. Secret values come back as ``***`` and are left as they are here."""
        if not isinstance(config, dict):
            return
        tools = config.get("tools")
        if isinstance(tools, list):
            refs = {
                t["name"]: t.get("trust") is True
                for t in tools
                if isinstance(t, dict) and t.get("name") in self.enabled
            }
            self.enabled = {name: name in refs for name in self.enabled}
            self.trusted = {name: refs.get(name, False) for name in self.trusted}
        options = config.get("options")
        if isinstance(options, dict):
            self.options.update({k: str(v) for k, v in options.items() if k in self.options and v != "***"})
        self.changed = False

    def agent_config(self) -> dict[str, Any]:
        """``AgentConfig`` for ``POST /sessions`` (and a turn's ``agent`` override)."""
        tools = [{"name": name, "trust": self.trusted[name]} for name, on in self.enabled.items() if on]
        return {"name": self.agent.name, "tools": tools, "options": dict(self.options)}

    def redacted(self, config: dict[str, Any]) -> dict[str, Any]:
        """``config`` with secret option values hidden, for the journal and the protocol log."""
        secret = {option.name for option in self.agent.options if option.secret}
        options = config.get("options")
        if not isinstance(options, dict):
            return config
        return {**config, "options": {k: ("***" if k in secret and v else v) for k, v in options.items()}}
