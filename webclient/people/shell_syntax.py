"""How a POSIX shell splits a line into simple commands, as far as a rule needs it: a one-pass tokenizer that knows
quotes, escapes, comments, operators, redirections and substitutions, and says when it is unsure (a substitution, a
here-doc, a line continuation, unbalanced quotes, a loop or case, a program that is an expansion or a glob).

Live metacharacters (unquoted, so they end a command, redirect it or substitute into it) are marked in the texts it
gives as private-use characters, so that a pattern's wildcard can be kept from matching them
(`webclient.people.command_line`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

LIVE = ";&|()<>\n$`"
"""The characters that, unquoted, end a command, redirect it, or substitute something into it."""
MARK_BASE = 0xE000
MARK = {ord(char): chr(MARK_BASE + ord(char)) for char in LIVE}
UNMARK = {ord(marked): char for char, marked in zip(LIVE, (chr(MARK_BASE + ord(c)) for c in LIVE), strict=True)}
MARKS = f"\\u{MARK_BASE:04x}-\\u{MARK_BASE + 0x7F:04x}"
"""A live metacharacter is marked as a private-use character, which no wildcard of a pattern matches."""

KEYWORDS = frozenset({"!", "{", "}", "(", ")", "if", "then", "elif", "else", "fi", "while", "until", "do", "done"})
"""Reserved words in front of a command (or alone), skipped to find the command they lead to."""
UNSURE_KEYWORDS = frozenset({"for", "case", "esac", "select", "function", "coproc", "in", "[[", "]]"})
"""Reserved words of constructs whose parts are not plain commands: a line with them is not split with confidence."""
_ORDINARY = re.compile(r"[^ \t'\"\\$`#<>&;|()\n*?\[{}]+")
_REDIRECTION = re.compile(r"&>>|&>|>>|>&|>\||<<<|<<-|<<|<&|<>|<|>")
"""Bash's redirection operators, longest first (``>&-`` is ``>&`` and the word ``-``)."""
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")


@dataclass(frozen=True)
class SimpleCommand:
    """One command of a line: ``written`` as written, ``text`` the same with its live metacharacters marked,
    ``words`` unquoted (without redirections), ``core`` the words from the program's name on (reserved words and
    assignments skipped)."""

    written: str
    text: str
    words: tuple[str, ...]
    core: tuple[str, ...]


class Scanner:
    """One pass over a line, as a POSIX shell tokenizes it, far enough to find its simple commands."""

    def __init__(self, line: str) -> None:
        self.line = line
        self.index = 0
        self.sure = True
        self.marked: list[str] = []
        self.nested: list[str] = []
        """Lines run by substitutions in it (read for a deny)."""
        self.commands: list[SimpleCommand] = []
        self.cuts: list[int] = []
        """Where each operator between commands starts and ends, in pairs."""
        self._text: list[str] = []
        self._start = 0
        """Where the command being read starts in the line."""
        self._words: list[str] = []
        self._plain: list[bool] = []
        """Per word: no unquoted expansion or glob (a program's name that is one could be anything)."""
        self._word: list[str] | None = None
        self._word_plain = True
        self._redirect_target = False

    def scan(self) -> None:
        line = self.line
        while self.index < len(line):
            char = line[self.index]
            if char in " \t":
                self._end_word()
                self._emit(char)
                self.index += 1
            elif char == "'":
                self._single_quoted()
            elif char == '"':
                self._double_quoted()
            elif char == "\\":
                escaped = line[self.index + 1 : self.index + 2]
                if escaped in ("\n", ""):  # a line continuation (or a trailing backslash)
                    self.sure = False
                self._add(escaped)
                self._emit(line[self.index : self.index + 2])
                self.index += 2
            elif char == "$":
                self._dollar()
            elif char == "`":
                end = self._backtick_end(self.index)
                self._substitution(self.index + 1, end, end + 1)
            elif char == "#" and self._word is None:  # a comment, to the end of the line
                end = line.find("\n", self.index)
                end = len(line) if end < 0 else end
                self._emit(line[self.index : end])
                self.index = end
            elif char in "<>" or (char == "&" and line.startswith(">", self.index + 1)):
                self._redirect()
            elif char in ";&|\n":
                operator = next(
                    op for op in (";;&", ";;", ";&", "&&", "||", "|&", char) if line.startswith(op, self.index)
                )
                if operator in (";;&", ";;", ";&"):  # a case's clauses
                    self.sure = False
                self._end_command()
                self._emit(operator, live=True, boundary=True)
                self.cuts += [self.index, self.index + len(operator)]
                self.index = self._start = self.index + len(operator)
            elif char in "()":
                if char == "(" and (self._words or self._word is not None or line.startswith("((", self.index)):
                    self.sure = False  # a function's definition, an array, arithmetic
                self._end_command()
                self._emit(char, live=True, boundary=True)
                self.cuts += [self.index, self.index + 1]
                self.index = self._start = self.index + 1
            else:
                ordinary = _ORDINARY.match(line, self.index)  # a run of characters with no meaning to the shell
                text = ordinary.group() if ordinary else char
                self._add(text, plain=ordinary is not None or char not in "*?[{}")
                self._emit(text)
                self.index += len(text)
        self._end_command()

    def _emit(self, text: str, live: bool = False, boundary: bool = False) -> None:
        """``text`` into the line (marked when ``live``) and, unless it ends a command, into the command's text."""
        marked = text.translate(MARK) if live else text
        self.marked.append(marked)
        if not boundary:
            self._text.append(marked)

    def _add(self, text: str, plain: bool = True) -> None:
        if self._word is None:
            self._word, self._word_plain = [], True
        self._word.append(text)
        self._word_plain = self._word_plain and plain

    def _end_word(self) -> None:
        if self._word is None:
            return
        if self._redirect_target:
            self._redirect_target = False
        else:
            self._words.append("".join(self._word))
            self._plain.append(self._word_plain)
        self._word = None

    def _end_command(self) -> None:
        """The command read so far ends here (at an operator, or the line's end)."""
        self._end_word()
        if self._redirect_target:  # a redirection with nothing to redirect to
            self.sure = False
            self._redirect_target = False
        text = "".join(self._text).strip(" \t")
        if text:
            self.commands.append(self._command(self.line[self._start : self.index].strip(" \t"), text))
        self._text, self._words, self._plain = [], [], []

    def _command(self, written: str, text: str) -> SimpleCommand:
        words, start = tuple(self._words), 0
        while start < len(words) and words[start] in KEYWORDS:
            start += 1
        if start < len(words) and words[start] in UNSURE_KEYWORDS:
            self.sure = False
        while start < len(words) and ASSIGNMENT.match(words[start]):
            start += 1
        if start < len(words) and not self._plain[start]:  # the program is an expansion or a glob: it could be any
            self.sure = False
        return SimpleCommand(written, text, words, words[start:])

    def _single_quoted(self) -> None:
        end = self.line.find("'", self.index + 1)
        if end < 0:
            self.sure = False
            end = len(self.line)
        self._add(self.line[self.index + 1 : end])
        self._emit(self.line[self.index : end + 1])
        self.index = end + 1

    def _double_quoted(self) -> None:
        line, position, text, plain = self.line, self.index + 1, [], True
        while position < len(line) and line[position] != '"':
            char = line[position]
            if char == "\\" and position + 1 < len(line):
                escaped = line[position + 1]
                if escaped == "\n":
                    self.sure = False
                text.append(escaped if escaped in '$`"\\\n' else line[position : position + 2])
                position += 2
                continue
            if char == "`" or (char == "$" and line[position + 1 : position + 2] in ("(", "{")):
                self.sure = False
                if char == "`":
                    end = self._backtick_end(position)
                    self.nested.append(line[position + 1 : end])
                else:
                    end = self._closing(position + 1)
                    self.nested.append(line[position + 2 : end])
                text.append(line[position : end + 1])
                position = end + 1
                plain = False
                continue
            plain = plain and char != "$"
            text.append(char)
            position += 1
        if position >= len(line):  # no closing quote
            self.sure = False
        self._add("".join(text), plain)
        self._emit(line[self.index : position + 1])
        self.index = position + 1

    def _dollar(self) -> None:
        line, start = self.line, self.index
        following = line[start + 1 : start + 2]
        if following in ("(", "{"):  # $(...), $((...)), ${...}
            end = self._closing(start + 1)
            self._substitution(start + 2, end, end + 1)
        elif following in ("'", '"'):  # $'...' (escapes) and $"..." (translated): read on, but not with confidence
            self.sure = False
            self._add("$", plain=False)
            self._emit("$", live=True)
            self.index += 1
        else:  # a variable: not a new command, but not a fixed text either
            self._add("$", plain=False)
            self._emit("$", live=True)
            self.index += 1

    def _substitution(self, start: int, end: int, after: int) -> None:
        """A substitution whose inside runs from ``start`` to ``end``: read for a deny, never split with confidence."""
        self.sure = False
        inside = self.line[start:end]
        self.nested.append(inside[1:-1] if inside.startswith("(") and inside.endswith(")") else inside)
        self._add(self.line[self.index : after], plain=False)
        self._emit(self.line[self.index : after], live=True)
        self.index = after

    def _redirect(self) -> None:
        line, start = self.line, self.index
        if line.startswith(("<(", ">("), start):  # a process substitution
            self._end_word()
            end = self._closing(start + 1)
            self._substitution(start + 2, end, end + 1)
            return
        found = _REDIRECTION.match(line, start)
        operator = found.group() if found else line[start]
        end = start + len(operator)
        if "<<" in operator:  # a here-doc (its lines follow) or a here-string
            self.sure = False
        if self._word is not None and "".join(self._word).isdigit():  # 2>: the number is the redirection's, no word
            self._word = None
        else:
            self._end_word()
        self._emit(operator, live=True)
        self.index = end
        self._redirect_target = True  # what follows is its file (or descriptor, or ``-``), no word of the command

    def _closing(self, opening: int) -> int:
        """Where the bracket at ``opening`` closes (nested brackets counted), or the line's end."""
        pair = {"(": ")", "{": "}"}[self.line[opening]]
        depth = 0
        for position in range(opening, len(self.line)):
            char = self.line[position]
            if char == self.line[opening]:
                depth += 1
            elif char == pair:
                depth -= 1
                if depth == 0:
                    return position
        self.sure = False
        return len(self.line)

    def _backtick_end(self, start: int) -> int:
        position = start + 1
        while position < len(self.line) and self.line[position] != "`":
            position += 2 if self.line[position] == "\\" else 1
        return min(position, len(self.line))
