"""Tests for webclient.render.text: agent text made safe to encode and honest to read."""

from __future__ import annotations

import pytest

from webclient.render.formats import plan_priority_class, plan_status_class, tab_title
from webclient.render.rendering import make_environment
from webclient.render.text import mixed_scripts, reveal, reveal_plain, scrub, shorten


def test_a_right_to_left_override_shows_as_a_marker_and_the_rest_stays_escaped() -> None:
    html = str(reveal("\u202eecno wollA <b>"))
    assert html == (
        '<span class="invisible-char" title="U+202E RIGHT-TO-LEFT OVERRIDE">⟨U+202E⟩</span>ecno wollA &lt;b&gt;'
    )
    assert "\u202e" not in html


@pytest.mark.parametrize(
    "char",
    ["\u202a", "\u202d", "\u2066", "\u2069", "\u200b", "\u200d", "\u200f", "\u2060", "\u2064", "\ufeff", "\u00ad",
     "\x00", "\x1b", "\x7f", "\x85", "\x9b", "\u061c", "\u3164", "\U000e0041", "\u2028"],
)  # fmt: skip
def test_every_invisible_or_reordering_character_is_marked(char: str) -> None:
    assert reveal_plain(f"a{char}b") == f"a⟨U+{ord(char):04X}⟩b"
    assert f"⟨U+{ord(char):04X}⟩" in str(reveal(f"a{char}b"))


def test_white_space_letters_and_emoji_stay_as_they_are() -> None:
    for text in ("tab\there", "two\nlines\r\n", "naïve café", "日本語", "❤️ ok", "שלום", "/home/ünïcode/x.py"):
        assert reveal_plain(text) == text
        assert "invisible-char" not in str(reveal(text))


def test_lone_surrogates_are_replaced_before_anything_is_shown() -> None:
    assert reveal_plain("a\udc80b\ud800") == "a\ufffdb\ufffd"
    assert scrub("ok") == "ok"
    assert str(reveal("\udc80")).encode("utf-8")


def test_a_name_that_mixes_scripts_is_named_and_a_path_of_single_script_names_is_not() -> None:
    assert mixed_scripts("/home/u/p\u0430ypal.py") == ["Latin", "Cyrillic"]
    assert mixed_scripts("/srv/\u03bfpen.txt") == ["Greek", "Latin"]
    assert mixed_scripts("/home/u/проект/main.py") == []
    assert mixed_scripts("/home/u/日本語のファイル.txt") == []
    assert mixed_scripts("/home/u/한국어漢字.txt") == []
    assert mixed_scripts("plain/ascii/path.py") == []
    assert mixed_scripts("naïve/résumé.txt") == []


def test_titles_are_cut_with_an_ellipsis() -> None:
    assert shorten("x" * 80) == "x" * 80
    assert shorten("x" * 81) == "x" * 79 + "…"
    assert tab_title("\u202e" + "y" * 200) == "⟨U+202E⟩" + "y" * 71 + "…"  # 80 characters in all


def test_plan_words_map_to_known_classes() -> None:
    assert [plan_status_class(s) for s in ("pending", "in_progress", "completed", "pending side-panel open")] == [
        "pending",
        "in_progress",
        "completed",
        "other",
    ]
    assert [plan_priority_class(p) for p in ("high", "medium", "low", "high jump", "")] == [
        "high",
        "medium",
        "low",
        "other",
        "other",
    ]


def test_urlencode_in_templates_survives_lone_surrogates() -> None:
    env = make_environment()
    query = env.from_string("{{ {'path': path, 'line': 3}|urlencode }}").render(path="/w/\udc80\ud800.txt")
    assert query == "path=%2Fw%2F%EF%BF%BD%EF%BF%BD.txt&amp;line=3"
    assert env.from_string("{{ path|urlencode }}").render(path="a b\udc80") == "a%20b%EF%BF%BD"
