"""A session's title until it has one of its own (the agent's, or the person's): its first prompt's first words, as
the demo agent titles its sessions. Agents that never title one (a remote AAP agent has no titles at all) would
otherwise leave every session "Untitled"."""

from __future__ import annotations

from itertools import islice

from webclient.viewmodel.entries import MessageEntry
from webclient.viewmodel.thread import Thread

TITLE_CHARS = 60
"""A longer first line is cut at a word, with an ellipsis."""
LOOKED_AT = 50
"""Entries read for the first prompt: the title is asked for at every change of the header, and a thread with no
prompt near its start (an agent's own session, loaded) has none worth reading thousands of entries for."""


def prompt_title(thread: Thread) -> str | None:
    """The title the first prompt of ``thread`` gives (None: no prompt yet, or one of attachments only)."""
    for entry in islice(thread, LOOKED_AT):
        if isinstance(entry, MessageEntry) and entry.kind == "user-message":
            return title_of(entry.text)
    return None


def title_of(text: str) -> str | None:
    """The first line of ``text`` with something in it, on one line, capitalised, cut at a word past `TITLE_CHARS`."""
    line = next((" ".join(line.split()) for line in text.splitlines() if line.strip()), "")
    if not line:
        return None
    if len(line) > TITLE_CHARS:
        cut = line[: TITLE_CHARS + 1].rsplit(" ", 1)[0] if " " in line[:TITLE_CHARS] else line[:TITLE_CHARS]
        line = cut.rstrip(" ,.;:") + "…"
    return line[:1].upper() + line[1:]
