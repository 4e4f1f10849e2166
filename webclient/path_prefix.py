"""What a path prefix may be (``WEBCLIENT_ROOT_PATH``, a trusted proxy's ``X-Forwarded-Prefix``): a plain path.

A prefix lands in every URL, cookie path and redirect the server writes, so nothing in it may need escaping.
"""

from __future__ import annotations

__all__ = ["path_prefix"]

PREFIX_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
MAX_PREFIX = 200


def path_prefix(value: str) -> str | None:
    """A path prefix (``/agents``, ``/tools/agents/``) as the app is served under it: ``""`` for none, ``/agents``
    (no slash at the end) for one, None when it is not a plain path: segments of letters, digits and ``-._~`` only,
    never ``.`` or ``..`` (a prefix lands in every URL, cookie path and redirect, so nothing there may need escaping).
    """
    value = value.strip()
    if value in ("", "/"):
        return ""
    segments = value.removesuffix("/").split("/")
    if len(value) > MAX_PREFIX or segments[0] != "" or len(segments) < 2:
        return None
    for segment in segments[1:]:
        if not segment or segment in (".", "..") or not set(segment) <= PREFIX_CHARACTERS:
            return None
    return "/".join(segments)
