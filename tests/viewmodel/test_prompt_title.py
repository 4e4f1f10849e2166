"""A session no one titled is titled by its first prompt: its first line, capitalised, cut at a word."""

from __future__ import annotations

from webclient.viewmodel.content import TextBlock
from webclient.viewmodel.prompt_title import prompt_title, title_of
from webclient.viewmodel.thread import Thread


def test_the_first_prompt_titles_the_thread_and_a_later_one_does_not() -> None:
    thread = Thread()
    assert prompt_title(thread) is None
    thread.add_notice("info", "Signed in")
    thread.start_turn([TextBlock(text="  \n  fix the   parser\nplease")])
    thread.start_turn([TextBlock(text="and the lexer")])
    assert prompt_title(thread) == "Fix the parser"


def test_a_long_line_is_cut_at_a_word_and_an_empty_prompt_gives_none() -> None:
    words = " ".join(["word"] * 30)
    assert title_of(words) == " ".join(["Word"] + ["word"] * 11) + "…"
    assert title_of("x" * 100) == "X" + "x" * 59 + "…"
    assert title_of(" \n ") is None
