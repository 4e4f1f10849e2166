"""A session's modes and config options: what ``session/new`` offers, what the client may change, and what it does.

Both ways of choosing are offered, as the spec allows: the older ``modes`` (``session/set_mode``,
``current_mode_update``) and ``configOptions`` (``session/set_config_option``, ``config_option_update``), whose
``mode`` option mirrors the modes — setting one sets the other. What they change stays small and visible:

- mode: ``ask`` asks before an edit (as always), ``code`` edits without asking, ``plan`` only describes it;
- model: how many words arrive per chunk, and the price the usage meter charges;
- thought level: whether and how much the agent thinks (``agent_thought_chunk``) before answering;
- verbose (a boolean, only for clients that advertise ``session.configOptions.boolean``): a closing sentence.

Specs: https://agentclientprotocol.com/protocol/session-modes and
https://agentclientprotocol.com/protocol/session-config-options
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from .jsonrpc import RequestError


@dataclass(frozen=True, slots=True)
class Choice:
    """One value of a select (or one mode): wire id, label, one-line description."""

    value: str
    name: str
    description: str

    def wire(self) -> dict[str, str]:
        return {"value": self.value, "name": self.name, "description": self.description}


@dataclass(frozen=True, slots=True)
class Model:
    """A pretend model: it changes the chunk size of streamed text and what a token costs."""

    choice: Choice
    group: str
    words_factor: float
    """Multiplies the words per streamed chunk (bigger chunks look faster)."""
    usd_per_mtok_in: float
    usd_per_mtok_out: float


MODES: tuple[Choice, ...] = (
    Choice("ask", "Ask", "Ask before changing files"),
    Choice("code", "Code", "Edit files without asking"),
    Choice("plan", "Plan", "Plan only, change nothing"),
)

MODEL_GROUPS: tuple[Choice, ...] = (
    Choice("fast", "Fast", "Quick answers in big chunks"),
    Choice("thorough", "Thorough", "Careful answers, a few words at a time"),
)

MODELS: tuple[Model, ...] = (
    Model(Choice("swift-mini", "Swift Mini", "The quickest and cheapest"), "fast", 3.0, 0.15, 0.6),
    Model(Choice("swift", "Swift", "Quick, for everyday questions"), "fast", 2.0, 1.0, 4.0),
    Model(Choice("sage", "Sage", "Careful and thorough (the default)"), "thorough", 1.0, 3.0, 15.0),
    Model(Choice("sage-max", "Sage Max", "The most careful, word by word, the priciest"), "thorough", 0.5, 15.0, 75.0),
)

THOUGHT_LEVELS: tuple[Choice, ...] = (
    Choice("off", "Off", "Answer straight away"),
    Choice("low", "Low", "A one-line thought first"),
    Choice("medium", "Medium", "Think before answering"),
    Choice("high", "High", "Think, then double-check"),
)

VERBOSE_DESCRIPTION = "Explain every step"


def _by_value(choices: tuple[Choice, ...]) -> dict[str, Choice]:
    return {c.value: c for c in choices}


_MODES = _by_value(MODES)
_MODELS = {m.choice.value: m for m in MODELS}
_THOUGHT_LEVELS = _by_value(THOUGHT_LEVELS)


@dataclass(slots=True)
class SessionSettings:
    """The current mode and config of one session, and their wire forms."""

    boolean_options: bool = False
    """The client advertised ``session.configOptions.boolean``, so the ``verbose`` toggle is offered."""
    mode: str = "ask"
    model: str = "sage"
    thought_level: str = "medium"
    verbose: bool = False

    # -- what is offered -------------------------------------------------------------------------

    def modes_state(self) -> dict[str, Any]:
        """``SessionModeState`` for ``session/new``."""
        return {
            "currentModeId": self.mode,
            "availableModes": [{"id": m.value, "name": m.name, "description": m.description} for m in MODES],
        }

    def config_options(self) -> list[dict[str, Any]]:
        """The complete ``SessionConfigOption`` list (order = priority), as ``session/new`` and updates send it."""
        options: list[dict[str, Any]] = [
            _select("mode", "Mode", "How freely I may change your files", "mode", self.mode, [m.wire() for m in MODES]),
            _select(
                "model",
                "Model",
                "Which (pretend) model answers",
                "model",
                self.model,
                [
                    {
                        "group": g.value,
                        "name": g.name,
                        "options": [m.choice.wire() for m in MODELS if m.group == g.value],
                    }
                    for g in MODEL_GROUPS
                ],
            ),
            _select(
                "thought_level",
                "Thinking",
                "Whether and how much I think before answering",
                "thought_level",
                self.thought_level,
                [t.wire() for t in THOUGHT_LEVELS],
            ),
        ]
        if self.boolean_options:
            options.append(
                {
                    "id": "verbose",
                    "name": "Verbose",
                    "description": VERBOSE_DESCRIPTION,
                    "type": "boolean",
                    "currentValue": self.verbose,
                }
            )
        return options

    # -- changes -----------------------------------------------------------------------------------

    def set_mode(self, mode_id: Any) -> None:
        """``session/set_mode``; an unknown mode is ``InvalidParams``."""
        if not isinstance(mode_id, str) or mode_id not in _MODES:
            raise RequestError.invalid_params({"modeId": f"unknown mode {mode_id!r}; one of {sorted(_MODES)}"})
        self.mode = mode_id

    def set_option(self, config_id: Any, value: Any, value_type: Any = None) -> None:
        """``session/set_config_option``: validate the id and the value, then apply; else ``InvalidParams``."""
        if config_id == "verbose" and self.boolean_options:
            if not isinstance(value, bool) or value_type not in (None, "boolean"):
                raise RequestError.invalid_params({"value": f"`verbose` takes a boolean, not {value!r}"})
            self.verbose = value
            return
        selects: dict[str, Collection[str]] = {"mode": _MODES, "model": _MODELS, "thought_level": _THOUGHT_LEVELS}
        choices = selects.get(config_id if isinstance(config_id, str) else "", ())
        if not choices:
            raise RequestError.invalid_params({"configId": f"unknown config option {config_id!r}"})
        if not isinstance(value, str) or value_type == "boolean" or value not in choices:
            raise RequestError.invalid_params({"value": f"{value!r} is not a value of `{config_id}`: {list(choices)}"})
        setattr(self, config_id, value)

    # -- what they change --------------------------------------------------------------------------

    @property
    def mode_choice(self) -> Choice:
        return _MODES[self.mode]

    @property
    def model_info(self) -> Model:
        return _MODELS[self.model]

    @property
    def thought_choice(self) -> Choice:
        return _THOUGHT_LEVELS[self.thought_level]

    def words_per_chunk(self, words: int) -> int:
        return max(1, round(words * self.model_info.words_factor))

    def summary(self) -> str:
        """One line: mode, model, thinking (and verbose when offered)."""
        model = self.model_info
        group = _by_value(MODEL_GROUPS)[model.group].name
        line = (
            f"**{self.mode_choice.name}** mode, model **{model.choice.name}** ({group}),"
            f" thinking **{self.thought_choice.name.lower()}**"
        )
        if self.boolean_options:
            line += f", verbose **{'on' if self.verbose else 'off'}**"
        return line


def _select(
    option_id: str, name: str, description: str, category: str, current: str, options: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "id": option_id,
        "name": name,
        "description": description,
        "category": category,
        "type": "select",
        "currentValue": current,
        "options": options,
    }


def mode_update(settings: SessionSettings) -> dict[str, Any]:
    """``current_mode_update`` for the current mode."""
    return {"sessionUpdate": "current_mode_update", "currentModeId": settings.mode}


def config_update(settings: SessionSettings) -> dict[str, Any]:
    """``config_option_update`` with the complete state."""
    return {"sessionUpdate": "config_option_update", "configOptions": settings.config_options()}
