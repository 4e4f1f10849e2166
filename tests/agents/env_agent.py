"""The scripted agent, which first says what environment it was started with: one JSON line per start appended to
the file ``$ENV_REPORT`` names (its HOME, XDG folders and every variable), then behaves as ``scripted_agent.py``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

report = os.environ.get("ENV_REPORT")
if report:
    with open(report, "a", encoding="utf-8") as out:
        out.write(json.dumps(dict(os.environ)) + "\n")
scripted = Path(__file__).with_name("scripted_agent.py")
os.execv(sys.executable, [sys.executable, str(scripted)])
