"""A raw-JSON ACP agent that says things about its own work: notices, compactions, and each turn's token usage.

Stdlib only; everything received is appended to ``$RECORD_FILE``. Every prompt gets, in order: a warning notice
with a description, a notice of a custom severity, a compaction ``k1`` (in progress, two summary chunks, then
completed), a compaction ``k2`` that fails with an error, the message "Done.", and the answer ``end_turn`` with
``usage`` (1,234 tokens: 900 in, 334 out, 20 thought, 5,000 cached read).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from raw_jsonrpc import send, serve
from raw_jsonrpc import update as session_update

SESSION_ID = "advisories-1"
USAGE = {"totalTokens": 1234, "inputTokens": 900, "outputTokens": 334, "thoughtTokens": 20, "cachedReadTokens": 5000}


def update(body: dict[str, Any]) -> None:
    session_update(SESSION_ID, body)
    time.sleep(0.02)  # the page sees each step (the test does not depend on it)


def summary(cid: str, text: str) -> None:
    update(
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": cid, "content": {"type": "text", "text": text}}
    )


def run_prompt(request_id: Any) -> None:
    update(
        {
            "sessionUpdate": "notice",
            "severity": "warning",
            "title": "Rate limit close",
            "description": "80% of the hourly quota is used.\nSlow down.",
        }
    )
    update({"sessionUpdate": "notice", "severity": "_billing*", "title": "Billing <b>notice</b>"})
    update({"sessionUpdate": "compaction_update", "compactionId": "k1", "status": "in_progress"})
    time.sleep(0.3)  # long enough for the page to be sent the compaction in progress
    summary("k1", "The user asked for a parser; ")
    summary("k1", "tests pass.")
    update({"sessionUpdate": "compaction_update", "compactionId": "k1", "status": "completed"})
    update({"sessionUpdate": "compaction_update", "compactionId": "k2", "status": "in_progress"})
    update({"sessionUpdate": "compaction_update", "compactionId": "k2", "status": "failed", "error": "Context too big"})
    update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Done."}})
    send({"id": request_id, "result": {"stopReason": "end_turn", "usage": USAGE}})


def handle(message: dict[str, Any]) -> None:
    method, request_id = message.get("method"), message.get("id")
    if method == "initialize":
        result = {"protocolVersion": 1, "agentInfo": {"name": "advisories-agent", "version": "1.0"}}
        send({"id": request_id, "result": result})
    elif method == "session/new":
        send({"id": request_id, "result": {"sessionId": SESSION_ID}})
    elif method == "session/prompt":
        threading.Thread(target=run_prompt, args=(request_id,), daemon=True).start()
    elif method == "session/cancel":
        pass
    elif request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    serve(handle)
