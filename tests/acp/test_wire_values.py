"""The readers of untrusted wire values (`webclient.acp.wire_values`): each lets through only what its place holds."""

from __future__ import annotations

from webclient.acp.wire_values import integer, items, mapping, name, number, string, strings, text


def test_string_is_any_string_and_nothing_else() -> None:
    assert [string(v) for v in ("", " a ", 3, None, ["a"])] == ["", " a ", None, None, None]


def test_name_needs_more_than_white_space_and_keeps_it_as_sent() -> None:
    assert [name(v) for v in (" id ", "", "  ", 3)] == [" id ", None, None, None]


def test_text_is_cut_to_its_limit_and_stripped_on_request() -> None:
    assert text("abcdef", 3) == "abc"
    assert text("", 3) is None and text(7, 3) is None
    assert text("  ab  ", 10) == "  ab  "
    assert text("  ab  ", 10, strip=True) == "ab"
    assert text("   ", 10, strip=True) is None


def test_items_strings_and_mapping_fall_back_to_empty() -> None:
    assert items([1, "a"]) == [1, "a"] and items({"a": 1}) == [] and items(None) == []
    assert strings(["a", 1, None, "b"]) == ["a", "b"] and strings("ab") == []
    assert mapping({"a": 1}) == {"a": 1} and mapping([("a", 1)]) == {}


def test_integer_and_number_refuse_booleans_and_keep_what_was_written() -> None:
    assert [integer(v) for v in (3, -1, True, 2.0, "3")] == [3, -1, None, None, None]
    assert [number(v) for v in (3, 2.5, False, "1")] == [3, 2.5, None, None]
    assert isinstance(number(3), int)
