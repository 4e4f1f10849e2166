"""What an agent tells us about a session besides the thread: title, usage, modes, settings, commands.

Protocol-neutral, like the thread: the ACP adapter (:mod:`webclient.acp.controls`) builds these from
wire shapes; the page shows them in the header, in selectors beside the prompt box and in the slash
menu. Every change is reported to ``listener`` with the region of the session's state that changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from webclient.viewmodel.events import Region

ControlsPart = Literal[Region.STATUS, Region.CONTROLS, Region.COMMANDS]
"""The regions controls change: the status (title, usage), the controls (modes, models, settings), the commands."""


@dataclass(frozen=True, slots=True)
class Mode:
    """A session mode the agent offers (ACP's older way to say "ask first", "plan only", ...)."""

    id: str
    name: str
    description: str | None = None


@dataclass(frozen=True, slots=True)
class Model:
    """A model the agent offers outside its config options (the ``models`` of gemini-cli's answers)."""

    id: str
    name: str
    description: str | None = None


@dataclass(frozen=True, slots=True)
class Choice:
    """One value of a select setting."""

    value: str
    name: str
    description: str | None = None


@dataclass(frozen=True, slots=True)
class ChoiceGroup:
    """Values shown under one heading; ``name`` None for an ungrouped list."""

    name: str | None
    choices: tuple[Choice, ...]


@dataclass(frozen=True, slots=True)
class SelectSetting:
    """A setting with one value out of several (model, mode, thought level, ...)."""

    id: str
    name: str
    current: str
    groups: tuple[ChoiceGroup, ...]
    description: str | None = None
    category: str | None = None
    type: Literal["select"] = "select"

    @property
    def choices(self) -> list[Choice]:
        return [choice for group in self.groups for choice in group.choices]

    def current_choice(self) -> Choice | None:
        return next((c for c in self.choices if c.value == self.current), None)


@dataclass(frozen=True, slots=True)
class ToggleSetting:
    """An on/off setting."""

    id: str
    name: str
    current: bool
    description: str | None = None
    category: str | None = None
    type: Literal["boolean"] = "boolean"


@dataclass(frozen=True, slots=True)
class TextSetting:
    """A free-text setting (a remote agent's ``text`` or ``secret`` option). A secret's value never reaches the view
    model: ``current`` is empty, or ``SECRET_SET`` once it has one."""

    id: str
    name: str
    current: str
    description: str | None = None
    secret: bool = False
    category: str | None = None
    type: Literal["text"] = "text"


SECRET_SET = "***"
"""What a secret setting's ``current`` holds once it has a value."""
MAX_TEXT_SETTING = 2000

Setting = SelectSetting | ToggleSetting | TextSetting


@dataclass(frozen=True, slots=True)
class Command:
    """A slash command the agent accepts as prompt text (``/name input``)."""

    name: str
    description: str
    hint: str | None = None
    """What to type after the name, when the command takes input."""


@dataclass(frozen=True, slots=True)
class Usage:
    """How full the agent's context window is, and what the session has cost so far."""

    used: int
    size: int
    cost: float | None = None
    currency: str | None = None

    @property
    def fraction(self) -> float:
        return min(1.0, self.used / self.size) if self.size > 0 else 0.0


def _ignore(part: ControlsPart) -> None:
    pass


@dataclass(eq=False)
class SessionControls:
    """The session's state outside the thread, kept as the agent last described it."""

    listener: Callable[[ControlsPart], None] = _ignore
    title: str | None = None
    """What the session is called: the name the person gave it, else the agent's title."""
    agent_title: str | None = None
    named: bool = False
    """The person named the session: the agent's titles do not replace that name until the person clears it."""
    usage: Usage | None = None
    modes: list[Mode] = field(default_factory=list)
    current_mode: str | None = None
    models: list[Model] = field(default_factory=list)
    current_model: str | None = None
    settings: list[Setting] = field(default_factory=list)
    commands: list[Command] = field(default_factory=list)

    @property
    def show_modes(self) -> bool:
        """Modes are shown only when the agent gave no settings: settings supersede them (ACP's rule)."""
        return bool(self.modes) and not self.settings

    @property
    def show_models(self) -> bool:
        """The model selector shows unless a setting of category ``model`` does the same (it wins)."""
        return bool(self.models) and not any(s.category == "model" for s in self.settings)

    def model(self, model_id: str | None) -> Model | None:
        return next((m for m in self.models if m.id == model_id), None)

    def mode(self, mode_id: str | None) -> Mode | None:
        return next((m for m in self.modes if m.id == mode_id), None)

    def setting(self, setting_id: str) -> Setting | None:
        return next((s for s in self.settings if s.id == setting_id), None)

    def choice(self, setting_id: str, value: str) -> str | bool | None:
        """The new value the page's ``value`` (a choice's value, or ``true``/``false``) picks for a setting;
        None when the setting is unknown, the value is not offered, or nothing would change."""
        setting = self.setting(setting_id)
        if isinstance(setting, SelectSetting):
            offered = value in {c.value for c in setting.choices}
            return value if offered and value != setting.current else None
        if isinstance(setting, ToggleSetting):
            on = value in ("true", "on")
            return on if on != setting.current else None
        if isinstance(setting, TextSetting):
            value = value[:MAX_TEXT_SETTING]
            return value if setting.secret or value != setting.current else None
        return None

    def set_title(self, title: str | None) -> None:
        """The agent's title (``session_info_update``): shown unless the person named the session."""
        self.agent_title = title
        if not self.named:
            self.title = title
            self.listener(Region.STATUS)

    def name(self, title: str | None) -> None:
        """The person's name for the session; None (cleared) shows the agent's title again."""
        self.named = title is not None
        self.title = title if title is not None else self.agent_title
        self.listener(Region.STATUS)

    def set_usage(self, usage: Usage) -> None:
        self.usage = usage
        self.listener(Region.STATUS)

    def set_modes(self, modes: list[Mode], current: str | None) -> None:
        self.modes = modes
        self.current_mode = current
        self.listener(Region.CONTROLS)

    def set_models(self, models: list[Model], current: str | None) -> None:
        self.models = models
        self.current_model = current
        self.listener(Region.CONTROLS)

    def set_current_model(self, model_id: str) -> None:
        self.current_model = model_id
        self.listener(Region.CONTROLS)

    def set_current_mode(self, mode_id: str) -> None:
        self.current_mode = mode_id
        self.listener(Region.CONTROLS)

    def set_settings(self, settings: list[Setting]) -> None:
        self.settings = settings
        self.listener(Region.CONTROLS)

    def set_commands(self, commands: list[Command]) -> None:
        self.commands = commands
        self.listener(Region.COMMANDS)

    def refresh(self, part: ControlsPart) -> None:
        """Show ``part`` again as it is (a selector the user moved must return to the agent's value)."""
        self.listener(part)
