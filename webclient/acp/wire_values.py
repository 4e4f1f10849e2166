"""Readers of untrusted wire values: each takes whatever the agent sent in a place and returns it only if it is what
that place should hold (else None, or an empty list or dict), so that a reader of the wire checks every value in one
call and the same way everywhere.

The wire's TypedDicts (`webclient.acp.wire`, `webclient.acp.wire_v2`) say what the spec promises; JSON from an agent
is ``cast`` to them where it enters, and read through these. They are hand-written, so they live here rather than in
the generated ``wire.py`` (one table, remade from the schemas); ``aap/`` keeps its own two (it may not import ``acp``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["integer", "items", "mapping", "name", "number", "string", "strings", "text"]


def string(value: object) -> str | None:
    """``value`` if it is a string (empty too), else None."""
    return value if isinstance(value, str) else None


def name(value: object) -> str | None:
    """``value`` as sent if it is a string with something besides white space (an id, a label), else None."""
    return value if isinstance(value, str) and value.strip() else None


def text(value: object, limit: int, *, strip: bool = False) -> str | None:
    """A non-empty string cut to ``limit`` characters (``strip``: its white space at both ends removed first, and
    None if nothing else is left), else None."""
    if not isinstance(value, str):
        return None
    value = value.strip() if strip else value
    return value[:limit] or None


def items(value: object) -> list[Any]:
    """``value`` if it is a list (its items still unchecked), else an empty list."""
    return value if isinstance(value, list) else []


def strings(value: object) -> list[str]:
    """The strings of a list, in order (anything else in it skipped); empty when ``value`` is not a list."""
    return [item for item in items(value) if isinstance(item, str)]


def mapping(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object (its values still unchecked), else an empty dict."""
    return value if isinstance(value, dict) else {}


def integer(value: object) -> int | None:
    """``value`` if it is a JSON integer (``true`` is not one), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def number(value: object) -> int | float | None:
    """``value`` if it is a JSON number, as it was written (3 stays 3, not 3.0), else None."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None
