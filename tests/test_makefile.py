"""The Makefile's targets, read as make would: ``make run`` installs what running needs and no test or dev tools
(most of its time went to Playwright, mypy and pytest), ``make test`` and ``make test-fast`` still install them."""

from __future__ import annotations

import re
from pathlib import Path

MAKEFILE = Path(__file__).resolve().parents[1] / "Makefile"


def read_rules() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Each target's prerequisites and recipe lines, with the Makefile's own variables expanded."""
    variables: dict[str, str] = {}
    prerequisites: dict[str, list[str]] = {}
    recipes: dict[str, list[str]] = {}
    current: list[str] = []
    text = MAKEFILE.read_text(encoding="utf-8").replace("\\\n", " ")

    def expand(words: str) -> str:
        for _ in range(5):
            words = re.sub(r"\$\((\w+)\)", lambda name: variables.get(name[1], name[0]), words)
        return words

    for line in text.splitlines():
        if line.startswith("\t"):
            for target in current:
                recipes[target].append(expand(line.strip()))
            continue
        if line.startswith("#") or not line.strip():
            continue
        assignment = re.match(r"^(\w+)\s*[:?]?=\s*(.*)$", line)
        if assignment:
            variables[assignment[1]] = assignment[2]
            current = []
            continue
        rule = re.match(r"^([^:=]+?)\s*&?:(?!=)\s*(.*)$", line)
        if rule:
            current = expand(rule[1]).split()
            for target in current:
                prerequisites.setdefault(target, []).extend(expand(rule[2]).split())
                recipes.setdefault(target, [])
    return prerequisites, recipes


def commands_of(target: str) -> list[str]:
    """Every recipe line ``make TARGET`` may run: its own and its prerequisites', all the way down."""
    prerequisites, recipes = read_rules()
    seen: set[str] = set()
    lines: list[str] = []
    todo = [target]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        lines.extend(recipes.get(name, []))
        todo.extend(prerequisites.get(name, []))
    return lines


def installed_extras(lines: list[str]) -> set[str]:
    """The extras of the project that ``pip install -e '.[...]'`` lines install."""
    return {extra for line in lines for group in re.findall(r"\.\[([\w,]+)\]", line) for extra in group.split(",")}


def test_make_run_installs_what_running_needs_and_no_test_tools() -> None:
    run = commands_of("run")
    assert any("pip install" in line and "-e ." in line for line in run), run
    assert installed_extras(run) == set(), run
    assert any("webclient" in line for line in run)


def test_pip_speaks_only_when_the_install_fails() -> None:
    installs = [line for line in commands_of("run") if "pip install" in line]
    assert installs and all("--quiet" in line and ">" in line and "cat" in line for line in installs), installs


def test_make_test_and_test_fast_still_install_the_test_and_dev_tools() -> None:
    for target in ("test", "test-fast", "lint"):
        assert {"test", "dev"} <= installed_extras(commands_of(target)), target
