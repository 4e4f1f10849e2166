"""What the client said it can do for the agent, from ``initialize``'s ``clientCapabilities``.

Spec: https://agentclientprotocol.com/protocol/initialization#client-capabilities. Every capability is off
unless the client sent exactly ``true`` — or, for the object-valued ones like
``session.configOptions.boolean``, an object (``{}`` = yes) — (the spec: "all omitted capabilities are
unsupported").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ClientCapabilities:
    """The client methods the demo agent may call, as booleans."""

    read_text_file: bool = False
    """``fs.readTextFile``: the client serves ``fs/read_text_file``."""
    write_text_file: bool = False
    """``fs.writeTextFile``: the client serves ``fs/write_text_file``."""
    terminal: bool = False
    """``terminal``: the client runs commands for the agent (all of ``terminal/*``)."""
    terminal_output_meta: bool = False
    """``_meta.terminal_output``: the client shows display-only terminals that the agent reports in tool-call
    ``_meta`` (``terminal_info`` / ``terminal_output`` / ``terminal_exit``, the claude-agent-acp convention)."""
    boolean_config_options: bool = False
    """``session.configOptions.boolean``: the client renders ``type: "boolean"`` config options."""
    form_questions: bool = False
    """``elicitation.form``: the client asks the user a form the agent describes (``elicitation/create``)."""
    link_questions: bool = False
    """``elicitation.url``: the client shows the user a link to follow."""
    subagents: bool = False
    """``subagents`` (unstable): the client shows child sessions (``subagent_update``, ``session_message``)."""

    @classmethod
    def from_wire(cls, raw: Any) -> ClientCapabilities:
        """Parse ``clientCapabilities`` leniently: anything malformed counts as "not supported"."""
        caps = _object(raw)
        fs, meta = _object(caps.get("fs")), _object(caps.get("_meta"))
        config_options = _object(_object(caps.get("session")).get("configOptions"))
        elicitation = _object(caps.get("elicitation"))
        return cls(
            read_text_file=fs.get("readTextFile") is True,
            write_text_file=fs.get("writeTextFile") is True,
            terminal=caps.get("terminal") is True,
            terminal_output_meta=meta.get("terminal_output") is True,
            boolean_config_options=isinstance(config_options.get("boolean"), dict),
            form_questions=isinstance(elicitation.get("form"), dict),
            link_questions=isinstance(elicitation.get("url"), dict),
            subagents=isinstance(caps.get("subagents"), dict),
        )


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
