"""The layers of ``webclient`` import one way, as docs/architecture.md draws them, and no module outgrows 400 lines.

Read from the real imports (``ast``, every ``import`` and ``from … import`` at any depth of a module), so a new
import that points the wrong way fails here rather than in a review.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.servers import ROOT

PACKAGE = ROOT / "webclient"
MAY_IMPORT: dict[str, set[str]] = {
    "workspace": set(),
    "viewmodel": set(),
    "people": set(),
    "session": {"workspace", "viewmodel", "people", "config"},
    "acp": {"workspace", "viewmodel", "session"},
    "aap": {"workspace", "viewmodel", "session"},
    "render": {"workspace", "viewmodel", "people", "session"},
    "store": {"workspace", "viewmodel", "people", "session", "config"},
    "web": {
        "workspace",
        "viewmodel",
        "people",
        "session",
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


def test_no_module_is_over_400_lines() -> None:
    long = {str(path.relative_to(ROOT)): n for _, path in modules() if (n := len(path.read_text().splitlines())) > 400}
    assert not long
