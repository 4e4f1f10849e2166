"""What the agent remembers about one session between prompts."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .session_config import SessionSettings
from .usage import UsageMeter
from .workspace import Workspace

if TYPE_CHECKING:
    from .turn import Turn


@dataclass
class SessionState:
    """One session: its folder, its mode and config, its usage meter and the turn running in it, if any."""

    session_id: str
    cwd: Path
    settings: SessionSettings = field(default_factory=SessionSettings)
    # "allow" / "reject" after the user picked an "always" option for edits; None = ask every time.
    edit_policy: str | None = None
    tool_counter: int = 0
    prompts: int = 0
    usage: UsageMeter = field(default_factory=UsageMeter)
    turn: Turn | None = None
    steering: list[str] = field(default_factory=list)
    """Prompts sent into the running turn (``_session/steering``) that it has not taken up yet."""
    workspace: Workspace = field(init=False)

    def __post_init__(self) -> None:
        self.workspace = Workspace(self.cwd)

    def next_tool_id(self, hint: str) -> str:
        self.tool_counter += 1
        return f"call_{self.tool_counter:03d}_{hint}"
