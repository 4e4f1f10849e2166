"""A plausible context/cost meter for ``usage_update``: tokens are estimated, prices come from the pretend model.

The context starts with what a real agent's instructions and tool definitions would take, and every turn adds
its prompt and everything the agent sent; the cost charges the whole context as input and the turn's output as
output, at the chosen model's prices. ``UsageUpdate`` in the v1 schema: ``used``, ``size``, ``cost {amount, currency}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .session_config import Model

CONTEXT_WINDOW = 200_000
SYSTEM_PROMPT_TOKENS = 3_200
IMAGE_TOKENS = 260
AUDIO_TOKENS = 400
CHARS_PER_TOKEN = 4
# Keys whose values are ids and enums rather than text a model would read.
_NOT_TEXT = {"sessionUpdate", "toolCallId", "messageId", "status", "kind", "type", "mimeType", "_meta"}


def estimate_tokens(value: Any) -> int:
    """Rough token count of a JSON value: ~4 characters a token for text; images and audio count a flat amount."""
    return _chars(value) // CHARS_PER_TOKEN + _media(value)


def _chars(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, Mapping):
        if value.get("type") in ("image", "audio"):
            return 0
        return sum(_chars(v) for k, v in value.items() if k not in _NOT_TEXT and k not in ("data", "blob"))
    if isinstance(value, list):
        return sum(_chars(v) for v in value)
    return 0


def _media(value: Any) -> int:
    if isinstance(value, Mapping):
        own = {"image": IMAGE_TOKENS, "audio": AUDIO_TOKENS}.get(str(value.get("type")), 0)
        return own + sum(_media(v) for v in value.values())
    if isinstance(value, list):
        return sum(_media(v) for v in value)
    return 0


@dataclass(slots=True)
class UsageMeter:
    """Tokens in context and the cumulative cost of one session."""

    used: int = SYSTEM_PROMPT_TOKENS
    cost: float = 0.0

    def record_turn(self, prompt_tokens: int, output_tokens: int, model: Model) -> dict[str, Any]:
        """Account for one turn and return its ``usage_update``."""
        input_tokens = self.used + prompt_tokens
        self.cost += (input_tokens * model.usd_per_mtok_in + output_tokens * model.usd_per_mtok_out) / 1_000_000
        self.used = min(CONTEXT_WINDOW, input_tokens + output_tokens)
        return {
            "sessionUpdate": "usage_update",
            "used": self.used,
            "size": CONTEXT_WINDOW,
            "cost": {"amount": round(self.cost, 6), "currency": "USD"},
        }
