"""The layers of ``webclient`` import one way, as docs/architecture.md draws them, no module imports itself back through
another, and a module grows long only when it is one thing.

Read from the real imports (``ast``, every ``import`` and ``from … import`` at any depth of a module), so a new
import that points the wrong way fails here rather than in a review.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

from tests.support.servers import ROOT

PACKAGE = ROOT / "webclient"
MAY_IMPORT: dict[str, set[str]] = {
    "workspace": set(),
    "viewmodel": set(),
    "people": set(),
    "session": {"workspace", "viewmodel", "people", "config"},
    "agents": {"workspace", "viewmodel", "people", "session", "config"},
    "acp": {"workspace", "viewmodel", "session"},
    "aap": {"workspace", "viewmodel", "session"},
    "render": {"workspace", "viewmodel", "people", "session"},
    "store": {"workspace", "viewmodel", "people", "session", "config"},
    "web": {
        "workspace",
        "viewmodel",
        "people",
        "session",
        "agents",
        "acp",
        "aap",
        "render",
        "store",
        "config",
        "proxy_proof",
        "path_prefix",
    },
    "config": {"workspace", "proxy_proof", "path_prefix"},
    "proxy_proof": set(),
    "path_prefix": set(),
    "cli": {"config", "web", "workspace"},
}
"""Which layers (folders of ``webclient``, or its top-level modules) each layer may import besides itself."""


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "webclient" and len(parts) > 1 else None


def imports(path: Path) -> set[str]:
    """The ``webclient`` modules and the demo package that ``path`` imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module == "webclient":
            found.update(f"webclient.{alias.name}" for alias in node.names)  # ``from webclient import x``
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return {name for name in found if name.split(".")[0] in ("webclient", "demo_agent", "demo_aap")}


def modules() -> list[tuple[str, Path]]:
    result = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).with_suffix("")
        result.append((relative.parts[0], path))
    return result


def test_every_layer_imports_only_the_layers_below_it() -> None:
    wrong = []
    for layer, path in modules():
        if layer in ("__init__", "__main__"):
            continue
        allowed = MAY_IMPORT[layer] | {layer}
        for name in imports(path):
            target = layer_of(name)
            if name.startswith(("demo_agent", "demo_aap")) or target not in allowed | {None, "__version__"}:
                wrong.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not wrong, "\n".join(wrong)


LONG = 400
"""Past this a module is one class or one table, and says so in its first line; a warning names the others."""
TOO_LONG = 600
"""No module is longer: cut it along a seam."""
ONE_THING = ("one class", "one table")


def lines_of(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_no_module_is_over_600_lines() -> None:
    long = {str(path.relative_to(ROOT)): n for _, path in modules() if (n := len(lines_of(path))) > TOO_LONG}
    assert not long


@pytest.mark.filterwarnings("default::UserWarning")  # shown in the summary, never an error
def test_a_module_over_400_lines_says_it_is_one_class_or_one_table() -> None:
    """Starlette's ``routing.py`` or Phoenix's ``channel.ex`` are long because they are one thing: so may ours be, if
    its first line says which."""
    unsaid = []
    for _, path in modules():
        lines = lines_of(path)
        if len(lines) > LONG:
            relative = path.relative_to(ROOT)
            warnings.warn(f"{relative} has {len(lines)} lines", UserWarning, stacklevel=1)
            if not any(words in lines[0].lower() for words in ONE_THING):
                unsaid.append(f"{relative} ({len(lines)} lines): {lines[0]}")
    assert not unsaid, "\n".join(unsaid)


def module_name(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


def module_imports(path: Path, known: set[str]) -> set[str]:
    """The ``webclient`` modules ``path`` imports, at any depth (``TYPE_CHECKING`` blocks too): ``from a.b import c``
    counts as ``a.b.c`` where that is a module, else as ``a.b``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.add(child if child in known else node.module)
    return {name for name in found if name in known}


def test_no_module_imports_itself_back() -> None:
    """No circle, type-only ones included: a helper carved out of a class takes a narrow ``Protocol``, not its owner
    (house style, section 5)."""
    paths = {module_name(path): path for _, path in modules()}
    known = set(paths)
    graph = {name: module_imports(path, known) - {name} for name, path in paths.items()}
    # Tarjan's strongly connected components: every component of more than one module is a circle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for target in sorted(graph[name]):
            if target not in index:
                visit(target)
                low[name] = min(low[name], low[target])
            elif target in on_stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == name:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    circles = [circle for circle in circles if circle not in KNOWN_CIRCLES]
    assert not circles, "\n".join(" <-> ".join(circle) for circle in circles)


KNOWN_CIRCLES: list[list[str]] = []
"""Circles being taken apart (issue 24); this list only shrinks."""
