"""The generated wire types (`webclient.acp.wire`, `webclient.acp.wire_v2`) are what `scripts/generate_wire.py` makes
of the official schemas in ``tests/support/schema``."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
COMMAND = "python scripts/generate_wire.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_wire", ROOT / "scripts" / "generate_wire.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_wire_modules_are_what_the_generator_makes_of_the_schemas() -> None:
    stale = [
        str(path.relative_to(ROOT))
        for path, text in _generator().render().items()
        if not path.exists() or path.read_text() != text
    ]
    assert not stale, f"{', '.join(stale)} not current: run {COMMAND}"


def test_wire_generator_output_is_deterministic() -> None:
    generator = _generator()
    assert generator.render() == generator.render()


def test_wire_types_import_and_name_v2_types_apart() -> None:
    from webclient.acp import wire, wire_v2

    assert "sessionUpdate" in wire.ToolCall.__annotations__
    assert {"message", "mode", "url"} <= set(wire.CreateElicitationRequest.__annotations__)
    typing_names = {"Any", "Literal", "Required", "TypeAlias", "TypedDict"}
    assert all(name.startswith("V2") for name in vars(wire_v2) if name[0].isupper() and name not in typing_names)
