"""Questions the agent asks the user besides permissions (ACP's elicitation): a form to fill in, or a link to
follow. Each is an entry of the thread, answered at most once, like a permission question.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from webclient.viewmodel.by import By
from webclient.viewmodel.entries import Entry

FieldKind = Literal["string", "number", "integer", "boolean", "choice"]
QuestionState = Literal["pending", "accepted", "declined", "cancelled", "withdrawn", "interrupted"]
Answer = Callable[[str, dict[str, Any] | None], None]
"""Told the answer: the action (accept, decline, cancel) and, for accept, the values."""


@dataclass(frozen=True, slots=True)
class Choice:
    value: str
    label: str


@dataclass(frozen=True, slots=True)
class QuestionField:
    """One field of a form question, from its JSON Schema property."""

    name: str
    kind: FieldKind
    title: str
    description: str = ""
    required: bool = False
    default: Any = None
    secret: bool = False
    """A password-like string: masked as it is typed, never shown again."""
    choices: tuple[Choice, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None


@dataclass(eq=False)
class Question(Entry):
    """A question of the agent's: ``mode`` form (``fields``) or url (``url``)."""

    ROLE: ClassVar[str] = "question"
    request_id: str = ""
    message: str = ""
    mode: str = "form"
    fields: list[QuestionField] = field(default_factory=list)
    url: str | None = None
    elicitation_id: str | None = None
    state: QuestionState = "pending"
    shown_values: dict[str, str] = field(default_factory=dict)
    """What the user answered, as shown afterwards (secrets left out)."""
    completed: bool = False
    """For a link: the agent said the flow at the link is done."""
    answered: Answer | None = field(default=None, repr=False)
    problem: str | None = None
    """Why the last answer could not be taken (shown on the form, which stays open)."""
    asked_by: str | None = None
    """The subagent (child session) that asked, when one did: the question is labelled with it."""
    by: By | None = None
    """Who answered it, in a session more than one person uses."""


def answer_question(question: Question, action: str, values: dict[str, Any] | None) -> bool:
    """Settle ``question`` once with ``action`` (accept, decline, cancel); False when it was settled already."""
    if question.state != "pending" or action not in ("accept", "decline", "cancel"):
        return False
    question.state = {"accept": "accepted", "decline": "declined", "cancel": "cancelled"}[action]  # type: ignore[assignment]
    if action == "accept" and values is not None:
        secrets = {f.name for f in question.fields if f.secret}
        question.shown_values = {name: _shown(value) for name, value in values.items() if name not in secrets}
    if question.answered is not None:
        question.answered(action, values if action == "accept" else None)
    return True


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def form_values(question: Question, raw: dict[str, str]) -> tuple[dict[str, Any] | None, str | None]:
    """The values of a form answer as the schema types them, from what the page sent (strings; a checkbox sent only
    when on), or why they cannot be taken (a required field empty, a number that is not one, an unknown choice)."""
    values: dict[str, Any] = {}
    for spec in question.fields:
        text = raw.get(spec.name, "").strip() if spec.kind != "string" else raw.get(spec.name, "")
        if spec.kind == "boolean":
            values[spec.name] = raw.get(spec.name) == "on"
            continue
        if not text:
            if spec.required:
                return None, f"“{spec.title}” is required."
            continue
        if spec.kind in ("number", "integer"):
            try:
                number: float = int(text) if spec.kind == "integer" else float(text)
            except ValueError:
                return None, f"“{spec.title}” must be {'a whole number' if spec.kind == 'integer' else 'a number'}."
            low, high = spec.minimum, spec.maximum
            if (low is not None and number < low) or (high is not None and number > high):
                return None, f"“{spec.title}” is out of range."
            values[spec.name] = number
        elif spec.kind == "choice":
            if text not in {choice.value for choice in spec.choices}:
                return None, f"“{spec.title}”: choose one of the options."
            values[spec.name] = text
        else:
            if spec.max_length is not None and len(text) > spec.max_length:
                return None, f"“{spec.title}” is longer than {spec.max_length} characters."
            values[spec.name] = text
    return values, None
