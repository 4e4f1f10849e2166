"""The session and agents layers are protocol-neutral: nothing they import, directly or not, is ACP, HTML or web."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import webclient

PACKAGE = Path(webclient.__file__).parent
FORBIDDEN = ("webclient.acp", "webclient.render", "webclient.web")


@functools.cache
def module_file(name: str) -> Path | None:
    """The source of one of our modules, or None for anything else (the standard library, dependencies)."""
    if name != "webclient" and not name.startswith("webclient."):
        return None
    path = PACKAGE.parent.joinpath(*name.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@functools.cache
def imported_names(path: Path, name: str) -> frozenset[str]:
    """Every module ``path`` imports, anywhere in it (in functions too), as absolute names; ``from a import b``
    counts ``a.b`` as well, since ``b`` may be a module. Kept for the process: each walk would parse them again."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return frozenset(found)


def reachable_from(start: str) -> dict[str, str]:
    """Our modules that ``start`` imports, directly or not, each with the module that imports it."""
    seen: dict[str, str] = {start: start}
    todo = [start]
    while todo:
        name = todo.pop()
        path = module_file(name)
        assert path is not None, name
        for imported in imported_names(path, name):
            if module_file(imported) is not None and imported not in seen:
                seen[imported] = name
                todo.append(imported)
    return seen


def session_modules() -> list[str]:
    """The session layer's modules and those of the agents layer (the sessions made from the agents offered)."""
    return sorted(
        f"webclient.{layer}.{path.stem}" for layer in ("session", "agents") for path in (PACKAGE / layer).glob("*.py")
    )


def test_the_session_and_agents_layers_import_nothing_of_acp_render_or_web() -> None:
    modules = session_modules()
    assert "webclient.session.core" in modules and "webclient.agents.manager" in modules
    leaks = {
        f"{imported} (imported by {importer}, reached from {module})"
        for module in modules
        for imported, importer in reachable_from(module).items()
        if imported.startswith(FORBIDDEN)
    }
    assert leaks == set()


def test_the_import_walk_sees_a_layer_crossing() -> None:
    """The check above can fail: the ACP adapter, walked the same way, reaches ACP and the session."""
    reached = reachable_from("webclient.acp.agent")
    assert "webclient.acp.connection" in reached
    assert "webclient.session.agent" in reached
