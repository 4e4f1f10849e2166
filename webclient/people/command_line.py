"""A shell command line as a rule's command pattern sees it: the simple commands it is made of, found by a tokenizer
that knows quotes, whether it could be split with confidence, and how a pattern matches it.

Rules judge what the agent says it will do (the line it reports), not what the process then does. So a line is read
the way a shell would start to read it, and where that reading is uncertain the line is never let through by a
wildcard:

- A wildcard (``*``, ``?``, ``[...]``) never matches a live shell metacharacter (an unquoted ``; & | ( ) < >``,
  newline, ``$`` or backtick): ``pytest *`` covers ``pytest -q tests`` and ``git commit -m "a; b"``'s quoted ``;``
  for ``git commit *``, never ``pytest -q; curl x | sh``. A metacharacter written in the pattern matches itself.
- An allow must cover every simple command of a line it could split (or the whole line, for a pattern that names
  the metacharacters itself, as ``make build && make test``). A line it cannot split safely (a substitution
  ``$(...)``, backticks, ``${...}``, ``<(...)``, a here-doc, a line continuation, unbalanced quotes, a loop or case,
  a command whose name is itself an expansion or a glob) is allowed only by a pattern without a wildcard that is
  the line itself.
- A deny or an ask matches when any part of the line matches: the line as it is, any simple command (as written,
  unquoted, without its variable assignments, its program's folder, or a wrapper like ``sudo``, ``env``,
  ``xargs``, ``timeout`` in front), a command a shell is given with ``-c`` or ``eval``, and what a substitution
  runs; here a wildcard may match anything, as it always did.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from webclient.people.shell_syntax import LIVE, MARK, MARKS, Scanner, SimpleCommand

WRAPPERS = frozenset(
    {
        *("sudo", "doas", "run0", "su", "runuser", "env", "nice", "ionice", "chrt", "taskset", "nohup", "setsid"),
        *("timeout", "stdbuf", "unbuffer", "xargs", "parallel", "command", "builtin", "exec", "time", "watch"),
        *("strace", "ltrace", "flock", "chroot", "busybox", "find", "ssh", "script", "systemd-run", "firejail"),
    }
)
"""Programs that run another command given in their arguments: a deny reads every later word as a possible start."""
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "su", "runuser", "busybox"})
"""Programs that run a command line given after a ``-c`` option: a deny reads that line too."""
_MARKED = re.compile(f"[{MARKS}]")
MAX_LINE = 8192
"""A longer line is not split: it is asked about, and a deny sees it only whole (reading it would cost too much)."""
MAX_RUNS = 16
"""Up to how many operators between commands every run of them is a view for a deny (beyond, the commands alone)."""
MAX_RUNS_LINE = 4096
"""Up to which length a line's runs of commands are views (each a copy of part of it)."""
MAX_WRAPPED = 12
"""How many of a wrapper's first words are each read as a possible start of the command it runs."""
MAX_DEPTH = 4
"""How deep lines within lines (``sh -c``, ``eval``, substitutions) are read for a deny."""


@dataclass(frozen=True)
class CommandLine:
    """A line read as a shell would: ``sure`` when it splits into ``commands`` with confidence; ``marked`` the line
    with its live metacharacters marked; ``views`` every text a deny or an ask is matched against, sorted."""

    line: str
    marked: str
    commands: tuple[SimpleCommand, ...]
    sure: bool
    views: tuple[str, ...]


def read(line: str, depth: int = 0) -> CommandLine:
    """``line`` split into its simple commands."""
    if len(line) > MAX_LINE:
        return CommandLine(line, line, (), False, tuple(sorted({line, line.strip()})))
    scanner = Scanner(line)
    scanner.scan()
    commands = tuple(scanner.commands)
    views: set[str] = {line, line.strip()}
    cuts = [0, *scanner.cuts, len(line)]  # every run of whole commands: a deny may name a pipeline (``curl * | sh``)
    if len(scanner.cuts) <= 2 * MAX_RUNS and len(line) <= MAX_RUNS_LINE:
        views.update(
            line[cuts[i] : cuts[j]].strip(" \t;&|\n")
            for i in range(0, len(cuts), 2)
            for j in range(i + 1, len(cuts), 2)
        )
    for command in commands:
        views.update(_views(command, depth, scanner.nested))
    for nested in scanner.nested:
        if depth < MAX_DEPTH:
            views.update(read(nested, depth + 1).views)
    sure = scanner.sure and _MARKED.search(line) is None  # a mark in the line itself could pass for an operator
    return CommandLine(line, "".join(scanner.marked).strip(" \t"), commands, sure, tuple(sorted(views)))


def allows(pattern: str, line: CommandLine) -> bool:
    """Whether an allow's ``pattern`` covers all of ``line``: each of its simple commands, or the line as a whole
    (wildcards never crossing a live metacharacter); a line not split with confidence only when ``pattern`` is it,
    without a wildcard."""
    compiled = _compiled(pattern)
    if not line.sure:
        return compiled.literal == line.line
    if compiled.allow is None:
        return False
    first = line.commands[0].text if line.commands else ""
    if not (line.marked.startswith(compiled.prefix) or first.startswith(compiled.prefix)):
        return False  # most patterns fail here, on their first letters
    if compiled.allow.fullmatch(line.marked):
        return True
    return bool(line.commands) and all(compiled.allow.fullmatch(command.text) for command in line.commands)


def touches(pattern: str, line: CommandLine) -> bool:
    """Whether a deny's or an ask's ``pattern`` matches any part of ``line`` that can be seen (see `CommandLine`)."""
    compiled, views = _compiled(pattern), line.views
    # The views are sorted: those starting with the pattern's plain prefix sit together, found by bisection.
    for index in range(bisect_left(views, compiled.prefix), len(views)):
        if not views[index].startswith(compiled.prefix):
            return False
        if compiled.anywhere(views[index]):
            return True
    return False


def _views(command: SimpleCommand, depth: int, nested: list[str]) -> list[str]:
    """The texts of ``command`` a deny is matched against; lines it hands to a shell are added to ``nested``."""
    found = [command.written, " ".join(command.words), " ".join(command.core)]
    core = command.core
    wrapped = core and posixpath.basename(core[0]) in WRAPPERS
    starts = range(min(len(core), MAX_WRAPPED if wrapped else 1))
    for start in starts:
        program, arguments = posixpath.basename(core[start]), core[start + 1 :]
        found.append(" ".join((program, *arguments)))
        found.append(" ".join(core[start:]))
        if start:  # behind a wrapper (xargs, find -exec) more arguments may follow: ``rm *`` catches ``xargs rm``
            found += [" ".join((program, *arguments, "")), " ".join((*core[start:], ""))]
        if depth >= MAX_DEPTH:
            continue
        if program == "eval":
            nested.append(" ".join(arguments))
        elif program in SHELLS:
            nested.extend(
                arguments[index + 1]
                for index, word in enumerate(arguments[:-1])
                if word.startswith("-") and not word.startswith("--") and "c" in word
            )
    return found


def _literal(pattern: str) -> str | None:
    """``pattern`` as plain text when it has no wildcard (a ``[x]`` of one character is that character), else None."""
    text, index = [], 0
    while index < len(pattern):
        char = pattern[index]
        if char in "*?":
            return None
        if char == "[":
            end = _class_end(pattern, index)
            if end is None:
                text.append("[")
                index += 1
                continue
            inner = pattern[index + 1 : end]
            if len(inner) != 1 or inner == "!":
                return None
            text.append(inner)
            index = end + 1
            continue
        text.append(char)
        index += 1
    return "".join(text)


def _class_end(pattern: str, start: int) -> int | None:
    """Where the ``[...]`` opened at ``start`` closes (as `fnmatch` reads it), or None: a plain ``[``."""
    end = start + 1
    if end < len(pattern) and pattern[end] == "!":
        end += 1
    if end < len(pattern) and pattern[end] == "]":
        end += 1
    while end < len(pattern) and pattern[end] != "]":
        end += 1
    return end if end < len(pattern) else None


@dataclass(frozen=True)
class _Compiled:
    """A pattern made ready: ``allow`` its regular expression whose wildcards never match a marked (live)
    metacharacter (None: no regular expression takes it), ``anywhere`` `fnmatch`'s, whose wildcards match anything,
    ``literal`` its text when it has no wildcard, ``prefix`` the plain text every match starts with."""

    allow: re.Pattern[str] | None
    anywhere: Callable[[str], object]
    literal: str | None
    prefix: str


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> _Compiled:
    parts, index = [], 0
    anything_but_marks = f"[^{MARKS}]"
    while index < len(pattern):
        char = pattern[index]
        index += 1
        if char == "*":
            parts.append(anything_but_marks + "*")
        elif char == "?":
            parts.append(anything_but_marks)
        elif char == "[" and (end := _class_end(pattern, index - 1)) is not None:
            written, index = pattern[index - 1 : end + 1], end + 1
            if len(written) == 3 and written[1] != "!":  # [x]: x itself, as glob.escape writes a * or a [
                parts.append(_literal_char(written[1]))
            else:
                parts.append(f"(?![{MARKS}]){_class(written)}")
        else:
            parts.append(_literal_char(char))
    try:
        allow: re.Pattern[str] | None = re.compile("".join(parts), re.DOTALL)
    except re.error:
        allow = None
    prefix = re.match(r"[^*?\[" + re.escape(LIVE) + "]*", pattern)
    anywhere = re.compile(fnmatch.translate(pattern)).match
    return _Compiled(allow, anywhere, _literal(pattern), prefix.group() if prefix else "")


def _class(written: str) -> str:
    """A ``[...]`` of a pattern as `fnmatch` translates it (ranges, ``!``, and what the `re` module would warn of)."""
    translated = fnmatch.translate(written)  # (?s:[...])\Z
    if translated.startswith("(?s:") and translated.endswith(")\\Z"):
        return f"(?:{translated[4:-3]})"
    return "(?!)"  # a form this Python's fnmatch does not give: the class matches nothing


def _literal_char(char: str) -> str:
    return f"(?:{re.escape(char)}|{MARK[ord(char)]})" if char in LIVE else re.escape(char)
