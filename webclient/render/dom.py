"""The page's element ids, in one place: Python (out-of-band fragments) and templates (as globals) use these.

An id names what the server updates later, so both sides must spell it the same: an entry is ``entry-<seq>``,
and the parts inside it that a frame targets (the Markdown of a message, its live rest, an embedded
terminal and its lines and screen, a diff) are that id with a suffix. The page's fixed ids (``#session``,
``#thread``, ``#composer``, ...), which the scripts of ``static/js`` look up too, are :data:`PAGE_IDS`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

from webclient.viewmodel.entries import Entry


def dom_id(entry: Entry) -> str:
    """The element of an entry (its card): every fragment about it targets this id or one made from it."""
    return f"{entry.scope}{thread_entry_id(entry.seq)}"


def thread_entry_id(seq: int) -> str:
    """The element of the session's own thread's entry numbered ``seq``: what a link to it names (``#entry-N``)."""
    return f"entry-{seq}"


def markdown_id(entry: Entry) -> str:
    """A message's finished Markdown blocks (new blocks are appended to it)."""
    return f"{dom_id(entry)}-md"


def live_id(entry: Entry) -> str:
    """A message's unfinished rest (frames edit it: `webclient.web.live.message_edits`)."""
    return f"{dom_id(entry)}-live"


def terminal_id(entry: Entry, number: int) -> str:
    """Terminal ``number`` as the card of ``entry`` embeds it (a terminal may show in several cards)."""
    return f"{dom_id(entry)}-term-{number}"


def terminal_lines_id(terminal: str) -> str:
    """The finished lines of the embedded terminal ``terminal`` (an id from :func:`terminal_id`)."""
    return f"{terminal}-lines"


def terminal_screen_id(terminal: str) -> str:
    """The visible screen of the embedded terminal ``terminal``, which may still change."""
    return f"{terminal}-screen"


def entry_diff_id(entry: Entry, index: int) -> str:
    """The ``index``-th diff (from 1) in the card of ``entry``."""
    return f"{dom_id(entry)}-diff-{index}"


CardPart = Literal["head", "title", "locations", "content", "raw"]
"""The parts of a tool-call card that a frame replaces (or appends to) alone, rather than the whole card."""


def card_part_id(entry: Entry, part: CardPart) -> str:
    """A part of the tool-call card of ``entry``: its head (status, title, Stop), title, locations, content, raw."""
    return f"{dom_id(entry)}-{part}"


def card_item_id(entry: Entry, index: int) -> str:
    """The ``index``-th content item (from 1) in the tool-call card of ``entry``."""
    return f"{dom_id(entry)}-item-{index}"


def review_reply_id(display: str, since: str) -> str:
    """Where the Changes panel of one file (``display`` as Changes names it; "" for the list itself) compared with
    ``since`` shows what the person's own Keep or Undo came to: sent to their page only, kept across the panel's
    reloads (``hx-preserve``). Hashed: a path may hold any character, an id may not."""
    named = f"{since}\0{display}".encode("utf-8", "surrogatepass")
    return "review-reply-" + hashlib.blake2b(named, digest_size=8).hexdigest()


@dataclass(frozen=True)
class PageIds:
    """The fixed element ids of our pages, which templates (``page_ids.thread``), the scripts of ``static/js``
    (``getElementById("thread")``, ``tests/render/test_dom.py`` checks they ask for no other) and Python share."""

    # The session page: its header and controls,
    session: str = "session"
    session_status: str = "session-status"
    session_controls: str = "session-controls"
    connection: str = "connection"
    end_session: str = "end-session"
    rename_title: str = "rename-title"
    mode_select: str = "mode-select"
    model_select: str = "model-select"
    # the thread (entries are appended to it, older ones put back after its start) and the plan,
    thread: str = "thread"
    thread_start: str = "thread-start"
    thread_end: str = "thread-end"
    plan_dock: str = "plan-dock"
    plan_dock_details: str = "plan-dock-details"
    # the composer, its queue and its menus,
    prompt_queue: str = "prompt-queue"
    composer: str = "composer"
    prompt_input: str = "prompt-input"
    prompt_nonce: str = "prompt-nonce"
    composer_attachments: str = "composer-attachments"
    composer_error: str = "composer-error"
    attach_input: str = "attach-input"
    command_hint: str = "command-hint"
    command_menu: str = "command-menu"
    mention_menu: str = "mention-menu"
    # the side panel (a file or a changed file shown in it: ids made from ``panel-file``, ``change-diff``), sharing;
    follow_toggle: str = "follow-toggle"
    side_panel: str = "side-panel"
    side_panel_body: str = "side-panel-body"
    changes_count: str = "changes-count"
    share: str = "share"
    share_people: str = "share-people"
    panel_file: str = "panel-file"
    change_diff: str = "change-diff"
    # the index's sessions, the inbox, the rules, the protocol log and the sign-in page.
    history: str = "history"
    inbox: str = "inbox"
    inbox_list: str = "inbox-list"
    rule_workspaces: str = "rule-workspaces"
    log_filters: str = "log-filters"
    log_list: str = "log-list"
    log_tail: str = "log-tail"
    log_end: str = "log-end"
    sign_in_token: str = "sign-in-token"


PAGE_IDS = PageIds()


GLOBALS = {
    "dom_id": dom_id,
    "markdown_id": markdown_id,
    "live_id": live_id,
    "terminal_id": terminal_id,
    "terminal_lines_id": terminal_lines_id,
    "terminal_screen_id": terminal_screen_id,
    "entry_diff_id": entry_diff_id,
    "card_part_id": card_part_id,
    "card_item_id": card_item_id,
    "review_reply_id": review_reply_id,
    "page_ids": PAGE_IDS,
}
"""The functions above under the names templates call them by."""
