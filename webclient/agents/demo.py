"""The built-in demo agent: the command line that starts it and the sample project each demo session copies."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

DEMO = "demo"
"""The built-in demo agent's name: always in the catalogue."""
DEMO_AGENT = f"{sys.executable} -m demo_agent"
"""The default agent: the demo (its own top-level package, installed with the ``demo`` extra)."""


def demo_sample() -> Path | None:
    """The demo's sample project, which each demo session works in a fresh copy of (found, not imported)."""
    spec = importlib.util.find_spec("demo_agent")
    folders = spec.submodule_search_locations if spec is not None else None
    return Path(next(iter(folders))) / "sample_workspace" if folders else None
