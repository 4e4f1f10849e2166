"""The built-in demo agent: a real ACP v1 agent (``python -m demo_agent``) that needs no API key.

It shows everything the browser client renders — streamed Markdown, thoughts, plans, every tool-call kind,
permission requests, real file edits in a throw-away sample workspace, failures, cancellation, every content
block type (an image, audio, file and web links, an embedded file), a replayed conversation — plus a few v2
draft / custom payloads a forward-compatible client must keep. Each scenario is a slash command; type ``help``
in a session for the list.

Sessions come with modes (ask / code / plan) and config options (mode, a grouped model select, a thought level,
and a boolean ``verbose`` for clients that render booleans) that change what the scenarios do; every turn ends
with a ``usage_update``, the first also with a title (``session_info_update``). Prompts may carry images,
audio, resource links and embedded resources, which the agent acknowledges one by one.

It uses the client's hands when the client offers them in ``initialize``: reads and writes go through
``fs/read_text_file`` / ``fs/write_text_file``, and ``run`` runs the sample project's tests in a client
terminal (``terminal/*``) — the only command it ever has run is its own Python with a small test runner
(:mod:`.runner_script`). Without those capabilities it reads and writes the disk itself and simulates commands.
"""

from __future__ import annotations

from .workspace import SAMPLE_WORKSPACE, make_sample_workspace

__all__ = ["SAMPLE_WORKSPACE", "make_sample_workspace"]
