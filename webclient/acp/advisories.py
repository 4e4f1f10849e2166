"""ACP's advisories → view model: ``notice``, ``compaction_update``, ``compaction_summary_chunk``, and the
``usage`` of a ``session/prompt`` answer.

Lenient, as the rest of the adapter: a value of the wrong type is left out (the protocol log keeps it), unknown
severities and statuses are kept. Spec: https://agentclientprotocol.com/rfds/session-notices and the
``CompactionUpdate``/``Usage`` definitions of ../shared/acp-schema/.
"""

from __future__ import annotations

from typing import Any

from webclient.viewmodel.advisories import add_agent_notice, add_turn_usage, append_summary, update_compaction
from webclient.viewmodel.content import ContentBlock, TextBlock
from webclient.viewmodel.entries import TurnUsage
from webclient.viewmodel.thread import Thread


def _block_text(block: ContentBlock) -> str:
    """The text of a summary's block; anything else is named, so the summary says something was there."""
    return block.text if isinstance(block, TextBlock) else f"[{type(block).__name__}]"


def notice(thread: Thread, update: dict[str, Any]) -> bool:
    title = update.get("title")
    if not isinstance(title, str) or not title.strip():
        return False
    severity = update.get("severity")
    description = update.get("description")
    add_agent_notice(
        thread,
        severity if isinstance(severity, str) and severity else "info",
        title,
        description if isinstance(description, str) else "",
    )
    return True


def compaction_update(thread: Thread, update: dict[str, Any], blocks: Any) -> bool:
    """``blocks`` turns a wire ``ContentBlock`` into a view-model block (`webclient.acp.updates.content_block`)."""
    compaction_id = update.get("compactionId")
    if not isinstance(compaction_id, str):
        return False
    patch: dict[str, Any] = {}
    status = update.get("status")
    if isinstance(status, str) or status is None and "status" in update:
        patch["status"] = status
    if "summary" in update:
        summary = update["summary"]
        if isinstance(summary, list):
            patch["summary"] = "".join(_block_text(blocks(item)) for item in summary)
        elif summary is None:
            patch["summary"] = None
    if "error" in update and (update["error"] is None or isinstance(update["error"], str)):
        patch["error"] = update["error"]
    update_compaction(thread, compaction_id, patch)
    return True


def compaction_summary_chunk(thread: Thread, update: dict[str, Any], blocks: Any) -> bool:
    compaction_id = update.get("compactionId")
    if not isinstance(compaction_id, str) or "content" not in update:
        return False
    append_summary(thread, compaction_id, _block_text(blocks(update["content"])))
    return True


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def turn_usage(thread: Thread, usage: Any) -> TurnUsage | None:
    """Show a ``PromptResponse.usage`` at the end of the turn; None (nothing shown) when it lacks its counts."""
    if not isinstance(usage, dict):
        return None
    total, given, made = (_count(usage.get(key)) for key in ("totalTokens", "inputTokens", "outputTokens"))
    if total is None or given is None or made is None:
        return None
    entry = TurnUsage(
        seq=0,
        turn=thread.turn,
        total=total,
        input=given,
        output=made,
        thought=_count(usage.get("thoughtTokens")),
        cached_read=_count(usage.get("cachedReadTokens")),
        cached_write=_count(usage.get("cachedWriteTokens")),
    )
    return add_turn_usage(thread, entry)
