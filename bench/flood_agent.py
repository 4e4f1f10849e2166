"""Flood test agent: raw ACP JSON over stdio (stdlib only), as fast as it can write.

Run as ``python bench/flood_agent.py [--messages N] [--updates N] [--tool-calls N] [--seed S] [--report FILE]``.
It answers ``initialize`` (protocolVersion 1) and ``session/new``; on ``session/prompt`` it writes

* ``--messages`` ``agent_message_chunk`` notifications (default 100,000) of Markdown-ish text: 3-8 words
  a chunk, paragraphs separated by blank lines, now and then a heading, a list or a fenced code block;
* ``--tool-calls`` tool calls (default 20), each created with ``tool_call``, then ``--updates``
  ``tool_call_update`` notifications in all (default 10,000) changing their status, title and content,
  interleaved evenly with the text,

then answers the prompt ``{"stopReason": "end_turn"}``. It writes as fast as the pipe takes it, or at ``--rate``
notifications per second. Everything is generated from ``--seed`` before the
agent answers ``initialize`` (so the measured turn is pure writing) and is the same on every run. With ``--stamp``
(and ``--rate``) every ``tool_call_update`` sets the title, ending in ``@`` and the wall-clock time it was written
(``time.time_ns()``), for a reader to measure the latency from the agent to the page (`bench/many_sessions.py`).

What it sent (notification counts, text bytes = UTF-8 bytes of every chunk's ``text``, stdout bytes, write
time) goes to stderr as one JSON line and, with ``--report``, to that file. ``session/cancel`` is ignored;
the agent leaves when its stdin closes.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Iterator
from typing import Any

WORDS = (
    "the a an of to in for on with by from as at that this it is are was be can will should would may "
    "function value server client request response stream buffer socket handler session agent message "
    "update render template fragment page browser thread entry tool call status result error retry "
    "timeout queue event loop task process pipe line byte chunk frame protocol schema field config "
    "option module package import export return yield async await parse encode decode escape markdown "
    "paragraph block list item code test check build deploy cache index query table column row key "
    "memory latency throughput benchmark profile measure compare improve reduce avoid keep make use "
    "first then next finally also however because therefore instead only every each both either"
).split()

CODE_LINES = (
    "def handle(request):",
    "    data = await request.json()",
    "    if not data:",
    "        return Response(status_code=400)",
    "    result = process(data, limit=100)",
    "    for item in result.items:",
    "        log.info('item %s', item.id)",
    "    return JSONResponse({'ok': True, 'count': len(result)})",
    "class Cache:",
    "    def __init__(self, size: int = 128) -> None:",
    "        self._store: dict[str, bytes] = {}",
    "    def get(self, key: str) -> bytes | None:",
    "        return self._store.get(key)",
    "x = [i * i for i in range(10) if i % 2 == 0]",
    "assert parse('1 < 2 && \"ok\"') == {'op': '<'}",
)


def markdown_tokens(rng: random.Random) -> Iterator[str]:
    """An endless Markdown document as tokens: a word with the separator that follows it."""
    while True:
        roll = rng.random()
        if roll < 0.08:  # a fenced code block
            lang = rng.choice(("python", "python", "js", "", "bash"))
            yield f"```{lang}\n"
            for line in rng.sample(CODE_LINES, rng.randint(3, 9)):
                words = line.split(" ")
                for i, word in enumerate(words):
                    yield word + (" " if i < len(words) - 1 else "\n")
            yield "```\n\n"
        elif roll < 0.14:  # a list
            for _ in range(rng.randint(2, 5)):
                words = [rng.choice(WORDS) for _ in range(rng.randint(4, 12))]
                words[0] = "- " + words[0]
                for i, word in enumerate(words):
                    yield word + (" " if i < len(words) - 1 else "\n")
            yield "\n"
        elif roll < 0.18:  # a heading
            words = [rng.choice(WORDS) for _ in range(rng.randint(2, 6))]
            words[0] = "## " + words[0].capitalize()
            for i, word in enumerate(words):
                yield word + (" " if i < len(words) - 1 else "\n\n")
        else:  # a paragraph of sentences, with some inline Markdown
            sentences = rng.randint(2, 7)
            for s in range(sentences):
                words = [rng.choice(WORDS) for _ in range(rng.randint(5, 18))]
                words[0] = words[0].capitalize()
                k = rng.randrange(len(words))
                style = rng.random()
                if style < 0.15:
                    words[k] = f"`{words[k]}()`"
                elif style < 0.25:
                    words[k] = f"**{words[k]}**"
                elif style < 0.30:
                    words[k] = f"<{words[k]}> & {words[k]}"  # text that must be escaped
                last = s == sentences - 1
                for i, word in enumerate(words):
                    if i < len(words) - 1:
                        yield word + " "
                    else:
                        yield word + rng.choice(".....?!") + ("\n\n" if last else " ")


STAMP = b"@0000000000000000000"
"""Where a written update's time goes (``--stamp``): 19 digits, as ``time.time_ns()`` has until 2286."""


def build(
    messages: int, updates: int, tool_calls: int, seed: int, stamp: bool = False
) -> tuple[list[bytes], dict[str, Any]]:
    """Every line of the turn, in order, and the figures describing them."""
    rng = random.Random(seed)
    tokens = markdown_tokens(rng)
    tool_calls = max(1, min(tool_calls, updates)) if updates else 0
    lines: list[bytes] = []
    text_bytes = 0

    def emit(update: dict[str, Any]) -> None:
        message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "flood-1", "update": update}}
        lines.append(json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")

    kinds = ("read", "edit", "search", "execute", "fetch", "think")
    created = 0
    per_call = updates / tool_calls if tool_calls else 0
    output: list[str] = []
    done_updates = 0
    for i in range(messages):
        text = "".join(next(tokens) for _ in range(rng.randint(3, 8)))
        text_bytes += len(text.encode())
        emit({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})
        # Spread the updates evenly over the text: after chunk i, as many as are due by then.
        due = (i + 1) * updates // messages if messages else updates
        while done_updates < due:
            call = int(done_updates / per_call)
            call_id = f"call-{call + 1}"
            if call == created:  # this call's first update: create it first
                created += 1
                output = []
                emit(
                    {
                        "sessionUpdate": "tool_call",
                        "toolCallId": call_id,
                        "title": f"Step {created}: {rng.choice(WORDS)} {rng.choice(WORDS)}",
                        "kind": kinds[call % len(kinds)],
                        "status": "pending",
                        "rawInput": {"command": f"run --step {created}", "path": f"src/module_{created}.py"},
                    }
                )
            n = done_updates - int(call * per_call)
            last = done_updates + 1 >= int((call + 1) * per_call) or done_updates + 1 == updates
            update: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": call_id}
            if last:
                update["status"] = rng.choice(("completed", "completed", "completed", "failed"))
            elif n == 0:
                update["status"] = "in_progress"
            if n % 7 == 3:
                update["title"] = f"Step {call + 1}: {' '.join(rng.choice(WORDS) for _ in range(3))} ({n})"
            # Tool output grows by a line and shows its last 8 lines (a tail of a running command).
            output.append(f"[{n:04d}] {' '.join(rng.choice(WORDS) for _ in range(rng.randint(3, 9)))}")
            if n % 3 == 0 or last:
                tail = "\n".join(output[-8:])
                update["content"] = [{"type": "content", "content": {"type": "text", "text": f"```\n{tail}\n```"}}]
            if len(update) == 2 or stamp:
                update["title"] = f"Step {call + 1}: working ({n})" + (STAMP.decode() if stamp else "")
            emit(update)
            done_updates += 1
    figures = {
        "messages": messages,
        "tool_calls": created,
        "tool_call_updates": done_updates,
        "notifications": messages + created + done_updates,
        "text_bytes": text_bytes,
        "stdout_bytes": sum(len(line) for line in lines),
    }
    return lines, figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--updates", type=int, default=10_000)
    parser.add_argument("--tool-calls", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=float, default=0, help="notifications per second (default: no limit)")
    parser.add_argument("--report", help="write the figures (JSON) to this file after the turn")
    parser.add_argument("--stamp", action="store_true", help="end each update's title with the time it is written")
    args = parser.parse_args()

    started = time.perf_counter()
    lines, figures = build(args.messages, args.updates, args.tool_calls, args.seed, args.stamp)
    figures["build_seconds"] = round(time.perf_counter() - started, 3)

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer

    def send(message: dict[str, Any]) -> None:
        stdout.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        stdout.flush()

    for raw in stdin:
        if not raw.strip():
            continue
        message = json.loads(raw)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # notifications (session/cancel) and stray responses
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "result": {
                        "protocolVersion": 1,
                        "agentCapabilities": {"loadSession": False},
                        "agentInfo": {"name": "flood-agent", "title": "Flood agent", "version": "1.0"},
                        "authMethods": [],
                    },
                }
            )
        elif method == "session/new":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"sessionId": "flood-1"}})
        elif method == "session/prompt":
            started = time.perf_counter()
            if args.rate > 0:  # paced: a batch every 10 ms or so, flushed
                batch = max(1, round(args.rate / 100))
                for i in range(0, len(lines), batch):
                    delay = started + i / args.rate - time.perf_counter()
                    if delay > 0:
                        time.sleep(delay)
                    if args.stamp:
                        now = b"@%019d" % time.time_ns()
                        stdout.writelines(line.replace(STAMP, now) for line in lines[i : i + batch])
                    else:
                        stdout.writelines(lines[i : i + batch])
                    stdout.flush()
            else:
                stdout.writelines(lines)  # blocks whenever the pipe is full: the reader sets the pace
            send({"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "end_turn"}})
            figures["write_seconds"] = round(time.perf_counter() - started, 3)
            report = json.dumps(figures)
            print(f"flood-agent: {report}", file=sys.stderr, flush=True)
            if args.report:
                with open(args.report, "w") as file:
                    file.write(report)
        else:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            send({"jsonrpc": "2.0", "id": request_id, "error": error})


if __name__ == "__main__":
    main()
