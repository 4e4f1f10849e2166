"""Values read from the wire leniently: of the type the spec gives them, else None (or empty). A value of the wrong
type is left out of what is shown rather than failing the whole message; the protocol log keeps it as sent."""

from __future__ import annotations

from typing import Any


def str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def int_or_none(value: Any) -> int | None:
    """An integer, never a boolean (JSON's ``true`` is no count)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def list_or_empty(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
