"""The built-in demo agent: a real ACP v1 agent (``python -m webclient.demo_agent``) that needs no API key.

It shows everything the browser client renders — streamed Markdown, thoughts, plans, every tool-call kind,
permission requests, real file edits in a throw-away sample workspace, failures, cancellation — plus a few
v2 draft / custom payloads a forward-compatible client must keep. Type ``help`` in a session for the list.
"""

from __future__ import annotations

from .workspace import SAMPLE_WORKSPACE, make_sample_workspace

__all__ = ["SAMPLE_WORKSPACE", "make_sample_workspace"]
