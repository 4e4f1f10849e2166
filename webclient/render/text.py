"""Text an agent sent, made safe to encode and honest to read.

JSON may carry lone surrogates (``"\\ud800"``) that UTF-8 cannot encode: `scrub` replaces them. A name can
also lie to the eye: a right-to-left override makes ``"\\u202eecno wollA"`` read "Allow once", a zero-width
space hides inside a path, a Cyrillic "а" stands in for a Latin "a". `reveal` shows every invisible or
reordering character as a visible marker such as ``⟨U+202E⟩``, and `mixed_scripts` names the scripts of a
word that mixes them. Templates reach these through filters (:mod:`webclient.render.rendering`); data attributes
that scripts read keep the exact text.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from markupsafe import Markup, escape

_INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0d\ufeff\uffa0\ufff0-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]"
)
"""Characters that show nothing, or reorder what follows: C0 and C1 controls (but tab, line feed and carriage return,
which show as the white space they are), format characters (category Cf:
bidi embeddings, overrides and isolates, zero-width ones, the soft hyphen, the BOM, tag characters), the line
and paragraph separators, and Unicode's other default-ignorable ones (Hangul fillers, variation selectors except
the two that pick an emoji's look). Any other Cf character is caught by its category in `_is_invisible`."""

TITLE_LIMIT = 80
"""Characters of a title the browser tab shows; longer ones are cut with an ellipsis."""


def scrub(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (cheap when there is none, the usual case)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _is_invisible(char: str) -> bool:
    return _INVISIBLE.match(char) is not None or (char > "\x7f" and unicodedata.category(char) == "Cf")


def _has_invisible(text: str) -> bool:
    return _INVISIBLE.search(text) is not None or (
        not text.isascii() and any(unicodedata.category(char) == "Cf" for char in text)
    )


def marker(char: str) -> str:
    """The visible stand-in for an invisible character, e.g. ``⟨U+202E⟩``."""
    return f"⟨U+{ord(char):04X}⟩"


def _char_name(char: str) -> str:
    return unicodedata.name(char, "control character" if unicodedata.category(char) == "Cc" else "format character")


def reveal(value: object) -> Markup:
    """``value`` as escaped HTML in which every invisible or reordering character shows as a marker
    (``<span class="invisible-char" title="U+202E RIGHT-TO-LEFT OVERRIDE">⟨U+202E⟩</span>``)."""
    text = scrub(str(value))
    if not _has_invisible(text):
        return escape(text)
    parts: list[str] = []
    for char in text:
        if _is_invisible(char):
            code = f"U+{ord(char):04X}"
            parts.append(f'<span class="invisible-char" title="{code} {_char_name(char)}">{marker(char)}</span>')
        else:
            parts.append(str(escape(char)))
    # Every character of the agent's text went through escape(); the markup around it is our own.
    return Markup("".join(parts))


def reveal_plain(value: object) -> str:
    """``value`` as plain text with every invisible or reordering character shown as a marker, for places that
    hold no markup (``<title>``, ``title`` attributes, ``<option>``)."""
    text = scrub(str(value))
    if not _has_invisible(text):
        return text
    return "".join(marker(char) if _is_invisible(char) else char for char in text)


def shorten(text: str, limit: int = TITLE_LIMIT) -> str:
    """``text`` cut to at most ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# Scripts that one word may mix without any trickery: Japanese (Han, Hiragana, Katakana), Korean (Han and
# Hangul), Chinese with Bopomofo.
_WRITING_SYSTEMS = (
    frozenset({"Han", "Hiragana", "Katakana"}),
    frozenset({"Han", "Hangul"}),
    frozenset({"Han", "Bopomofo"}),
)
_SCRIPT_ALIASES = {"CJK": "Han", "FULLWIDTH": "Fullwidth", "MATHEMATICAL": "Mathematical"}
_NO_SCRIPT = frozenset({"MODIFIER", "SUPERSCRIPT", "SUBSCRIPT"})
"""Letters that go with any script (modifier apostrophes, superscript letters)."""
_WORD = re.compile(r"[^\W\d_]+")


@lru_cache(maxsize=4096)
def _script(char: str) -> str | None:
    """The script of a letter, from the first word of its Unicode name (LATIN, CYRILLIC, GREEK, CJK, ...)."""
    name = unicodedata.name(char, "")
    if not name:
        return None
    first = name.split(" ", 1)[0]
    if first in _NO_SCRIPT:
        return None
    return _SCRIPT_ALIASES.get(first, first.capitalize())


def mixed_scripts(text: str) -> list[str]:
    """The scripts of the first word of ``text`` whose letters come from more than one (``["Latin",
    "Cyrillic"]`` for "pаth" with a Cyrillic "а"), or ``[]``. Words are runs of letters, so a path whose
    folders are in different scripts is not flagged, a look-alike letter inside one name is."""
    if text.isascii():
        return []
    for word in _WORD.findall(scrub(text)):
        if word.isascii():
            continue
        scripts: list[str] = []
        for char in word:
            script = _script(char)
            if script is not None and script not in scripts:
                scripts.append(script)
        if len(scripts) > 1 and not any(system.issuperset(scripts) for system in _WRITING_SYSTEMS):
            return scripts
    return []
