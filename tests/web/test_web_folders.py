"""The web layer's folders import one way, as docs/architecture.md draws them: ``access/`` (who a request is) nothing
of the others, ``live/`` (the live socket) ``access/``, ``pages/`` both, and ``app`` everything; ``context`` (what a
route reads off the request) sits above ``access/``, ``cluster/`` (several instances: leases, forwarding) too, and
``page_context``, ``readiness`` (the probes, the drain), ``page_sockets`` (uvicorn's socket) and ``delivery/``
(compression, static files) import nothing of ``web``."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.servers import ROOT

WEB = ROOT / "webclient" / "web"
MAY_IMPORT: dict[str, set[str]] = {
    "page_context": set(),
    "access": {"page_context"},
    "context": {"access", "page_context"},
    "live": {"access", "context", "page_context"},
    "pages": {"access", "cluster", "context", "live", "page_context"},
    "demo_remote": set(),
    "readiness": set(),
    "page_sockets": set(),
    "delivery": set(),
    "cluster": {"access"},
    "app": {"access", "cluster", "context", "live", "pages", "page_context", "demo_remote", "delivery", "readiness"},
}
"""What each part of ``web`` (a folder, or a module at its top) may import of ``web`` besides itself."""


def part_of(path: Path) -> str:
    relative = path.relative_to(WEB)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def web_imports(path: Path) -> set[str]:
    """The parts of ``web`` that ``path`` imports (``TYPE_CHECKING`` and function-level imports too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            parts = name.split(".")
            part = parts[2] if parts[:2] == ["webclient", "web"] and len(parts) > 2 else ""
            if part and ((WEB / part).is_dir() or (WEB / f"{part}.py").is_file()):
                found.add(parts[2])
    return found


def test_the_web_folders_import_one_way() -> None:
    wrong = []
    for path in sorted(WEB.rglob("*.py")):
        if path.parent == WEB and path.stem == "__init__":
            continue
        part = part_of(path)
        for target in web_imports(path) - {part} - MAY_IMPORT[part]:
            wrong.append(f"{path.relative_to(ROOT)} ({part}) imports web.{target}")
    assert not wrong, "\n".join(wrong)
