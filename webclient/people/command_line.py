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

import posixpath
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache

from webclient.people.shell_syntax import LIVE, MARK, MARK_BASE, MARKS, UNMARK, Scanner, SimpleCommand

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
MAX_RUNS = 16
"""Up to how many operators between commands every run of them is a view for a deny (beyond, the commands alone)."""
MAX_DEPTH = 4
"""How deep lines within lines (``sh -c``, ``eval``, substitutions) are read for a deny."""


@dataclass(frozen=True)
class CommandLine:
    """A line read as a shell would: ``sure`` when it splits into ``commands`` with confidence; ``marked`` the line
    with its live metacharacters marked; ``views`` every text a deny or an ask is matched against."""

    line: str
    marked: str
    commands: tuple[SimpleCommand, ...]
    sure: bool
    views: frozenset[str]


def read(line: str, depth: int = 0) -> CommandLine:
    """``line`` split into its simple commands."""
    scanner = Scanner(line)
    scanner.scan()
    commands = tuple(scanner.commands)
    views: set[str] = {line, line.strip()}
    cuts = [0, *scanner.cuts, len(line)]  # every run of whole commands: a deny may name a pipeline (``curl * | sh``)
    if len(scanner.cuts) <= 2 * MAX_RUNS:
        views.update(
            line[cuts[i] : cuts[j]].strip(" \t;&|\n")
            for i in range(0, len(cuts), 2)
            for j in range(i + 1, len(cuts), 2)
        )
    for command in commands:
        views.update(_views(command, depth, scanner.nested))
    for nested in scanner.nested:
        if depth < MAX_DEPTH:
            views |= read(nested, depth + 1).views
    sure = scanner.sure and not any(MARK_BASE <= ord(char) <= MARK_BASE + 0x7F for char in line)
    return CommandLine(line, "".join(scanner.marked).strip(" \t"), commands, sure, frozenset(views))


def allows(pattern: str, line: CommandLine) -> bool:
    """Whether an allow's ``pattern`` covers all of ``line``: each of its simple commands, or the line as a whole
    (wildcards never crossing a live metacharacter); a line not split with confidence only when ``pattern`` is it,
    without a wildcard."""
    if not line.sure:
        return _literal(pattern) == line.line
    matcher = _compiled(pattern)
    if matcher is None:
        return False
    if matcher.fullmatch(line.marked):
        return True
    return bool(line.commands) and all(matcher.fullmatch(command.text) for command in line.commands)


def touches(pattern: str, line: CommandLine) -> bool:
    """Whether a deny's or an ask's ``pattern`` matches any part of ``line`` that can be seen (see `CommandLine`)."""
    return any(fnmatchcase(view, pattern) for view in line.views)


def _views(command: SimpleCommand, depth: int, nested: list[str]) -> list[str]:
    """The texts of ``command`` a deny is matched against; lines it hands to a shell are added to ``nested``."""
    found = [command.text.translate(UNMARK), " ".join(command.words), " ".join(command.core)]
    core = command.core
    starts = range(len(core)) if core and posixpath.basename(core[0]) in WRAPPERS else range(min(len(core), 1))
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


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    """``pattern`` as a regular expression whose wildcards never match a marked (live) metacharacter, while a
    metacharacter written in it matches itself, live or quoted; None for a pattern no regular expression takes."""
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
            inner, index = pattern[index:end], end + 1
            if len(inner) == 1 and inner != "!":
                parts.append(_literal_char(inner))
                continue
            negated = inner.startswith("!")
            inner = re.sub(r"([\\\[^&~|])", r"\\\1", inner[1:] if negated else inner)
            parts.append(f"(?![{MARKS}])[{'^' if negated else ''}{inner}]")
        else:
            parts.append(_literal_char(char))
    try:
        return re.compile("".join(parts), re.DOTALL)
    except re.error:
        return None


def _literal_char(char: str) -> str:
    return f"(?:{re.escape(char)}|{MARK[ord(char)]})" if char in LIVE else re.escape(char)
