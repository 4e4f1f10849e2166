"""Text an agent sent, made safe to encode: JSON may carry lone surrogates (``"\\ud800"``) that UTF-8 cannot."""

from __future__ import annotations


def scrub(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (cheap when there is none, the usual case)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text
