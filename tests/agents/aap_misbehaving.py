"""An AAP v3 server that does what real servers do wrong (../shared/docs/aap-v3.md §6), one thing per prompt word:

- ``no-stop``: calls the client's ``read_file`` and ends the stream without ``turn_stop``;
- ``double-error``: says a little, then ``turn_stop`` ``error`` twice;
- ``granted-no-result``: asks permission for ``deploy``; once granted it runs it but streams no ``tool_result``
  (the result is only in the history);
- ``effect-and-deploy``: calls the client's ``run_command`` (``sh -c "echo ran >> ran.log"``: it leaves a trace each
  time it runs) and asks permission for ``deploy``, in one round;
- ``http-500``: answers the turn with HTTP 500 and a plain-text body;
- ``xss``: the XSS corpus (``tests/support/xss_payloads.py``) in every field it controls: text, thinking, tool
  names, inputs and results, and the name of a tool that needs a permission;
- ``giant-line``: one ``text_delta`` whose one ``data:`` line is 100 MiB; ``giant-event``: one event of 1,600
  ``data:`` lines of 64 KiB;
- ``endless``: ``text_delta``s of 4 KiB, as fast as it can, forever; ``silent``: ``turn_start``, then nothing, the
  connection kept open;
- ``unknown``: events of names AAP v3 does not have (some twice, one nameless), then "ok";
- ``other-session``: deltas labelled for another session, and for another turn than ``turn_start`` named, then "ok";
- ``broken-json``: an event whose data is not JSON, then "ok";
- anything else: "ok".

``ROUGH_ANSWERS`` spoils its plain JSON answers: ``giant-meta`` (a 100 MiB ``GET /meta``), ``broken-meta`` (not
JSON), ``giant-create`` (a 100 MiB answer to ``POST /sessions``), ``gzip-meta`` (``GET /meta`` gzipped, unasked: 100 MiB
that unpack from 100 KB), ``endless-sessions`` (``GET /sessions`` pages of 100 sessions whose ``next`` never ends; how
many pages were asked for goes to ``SENT_FILE``).
Every request body it gets is appended to ``RECORD_FILE`` (JSON lines). It does not count what of a giant answer
the client read: once the client has gone, uvicorn's ``send`` drops each chunk without a word and the answer's
generator runs on to its end (a test counts what the client's process read instead, from /proc).
``python aap_misbehaving.py --port N``.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

META = {
    "version": 3,
    "agents": [
        {
            "name": "rough",
            "tools": [{"name": "deploy", "description": "Deploy", "parameters": {"type": "object"}}],
            "capabilities": {"stream": {"delta": {}}, "history": {"full": {}}, "application": {"tools": {}}},
        }
    ],
}
history: list[dict[str, Any]] = []

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from xss_payloads import PAYLOADS  # noqa: E402  (by path: this server runs as a script)


def hostile_events() -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = [("turn_start", {})]
    for index, payload in enumerate(PAYLOADS):
        events.append(("thinking_delta" if index % 7 == 0 else "text_delta", {"delta": payload + "\n\n"}))
    for index, payload in enumerate(PAYLOADS[::9]):
        call = {"toolCallId": f"x{index}", "name": payload, "input": {"path": payload, payload: payload}}
        events += [("tool_call", call), ("tool_result", {"toolCallId": f"x{index}", "content": payload})]
    asked = {"toolCallId": "x-ask", "name": PAYLOADS[3], "input": {"why": PAYLOADS[4]}}
    history.append({"role": "assistant", "content": [{"type": "tool_use", **asked}]})
    return [*events, ("tool_call", asked), ("turn_stop", {"stopReason": "tool_use"})]


def sse(name: str, data: dict[str, Any]) -> bytes:
    named = f"event: {name}\n" if name else ""
    return f"{named}data: {json.dumps(data)}\n\n".encode()


async def stream(events: list[tuple[str, dict[str, Any]]]) -> AsyncIterator[bytes]:
    for name, data in events:
        yield sse(name, data)


def record(body: Any) -> None:
    if os.environ.get("RECORD_FILE"):
        with open(os.environ["RECORD_FILE"], "a") as file:
            file.write(json.dumps(body) + "\n")


MIB = 1024 * 1024
FILLER = b"a" * MIB


def spoiled(answer: str) -> bool:
    return os.environ.get("ROUGH_ANSWERS") == answer


PACKED = gzip.compress(b'{"version": 3, "padding": "' + FILLER * 100 + b'"}', 1) if spoiled("gzip-meta") else b""


async def giant_json() -> AsyncIterator[bytes]:
    yield b'{"sessionId": "rough-1", "padding": "'
    for _ in range(100):
        yield FILLER
    yield b'"}'


async def giant_line() -> AsyncIterator[bytes]:
    yield sse("turn_start", {})
    yield b'event: text_delta\ndata: {"delta": "'
    for _ in range(100):
        yield FILLER
    yield b'"}\n\n' + sse("turn_stop", {"stopReason": "end_turn"})


async def giant_event() -> AsyncIterator[bytes]:
    yield sse("turn_start", {}) + b"event: text_delta\n"
    line = b"data: " + b"a" * 65536 + b"\n"
    for _ in range(1600):
        yield line
    yield b"\n" + sse("turn_stop", {"stopReason": "end_turn"})


async def endless() -> AsyncIterator[bytes]:
    yield sse("turn_start", {})
    delta = sse("text_delta", {"delta": "tick " * 819})
    while True:
        yield delta
        await asyncio.sleep(0)


async def silent() -> AsyncIterator[bytes]:
    yield sse("turn_start", {})
    await asyncio.Event().wait()


def unknown_events() -> list[tuple[str, dict[str, Any]]]:
    surprise = ("surprise", {"what": "a v4 event"})
    return [("turn_start", {}), surprise, ("outbox", {}), surprise, ("", {"nameless": True}),
            ("text_delta", {"delta": "ok"}), ("turn_stop", {"stopReason": "end_turn"})]  # fmt: skip


def other_session_events() -> list[tuple[str, dict[str, Any]]]:
    return [
        ("turn_start", {"turnId": "turn-1"}),
        ("text_delta", {"delta": "LEAKED-SESSION ", "sessionId": "someone-else"}),
        ("tool_call", {"toolCallId": "c-other", "name": "read_file", "input": {}, "sessionId": "someone-else"}),
        ("text_delta", {"delta": "LEAKED-TURN ", "turnId": "turn-0"}),
        ("text_delta", {"delta": "ok", "turnId": "turn-1", "sessionId": "rough-1"}),
        ("turn_stop", {"stopReason": "end_turn"}),
    ]


async def broken_json() -> AsyncIterator[bytes]:
    yield sse("turn_start", {}) + b"event: text_delta\ndata: {not json\n\n"
    yield sse("text_delta", {"delta": "ok"}) + sse("turn_stop", {"stopReason": "end_turn"})


RAW_STREAMS = {
    "giant-line": giant_line,
    "giant-event": giant_event,
    "endless": endless,
    "silent": silent,
    "broken-json": broken_json,
}


async def meta(request: Request) -> Response:
    if spoiled("giant-meta"):
        return StreamingResponse(giant_json(), media_type="application/json")
    if spoiled("gzip-meta"):
        return Response(PACKED, media_type="application/json", headers={"Content-Encoding": "gzip"})
    if spoiled("broken-meta"):
        return Response(b'{"version": 3, "agents": [', media_type="application/json")
    return JSONResponse(META)


async def create(request: Request) -> Response:
    record(await request.json())
    if spoiled("giant-create"):
        return StreamingResponse(giant_json(), status_code=201, media_type="application/json")
    return JSONResponse({"sessionId": "rough-1"}, status_code=201)


pages_asked = 0


async def listing(request: Request) -> Response:
    global pages_asked
    if not spoiled("endless-sessions"):
        return JSONResponse({"sessions": [{"sessionId": "rough-1", "agent": {"name": "rough"}}]})
    pages_asked += 1
    if os.environ.get("SENT_FILE"):
        Path(os.environ["SENT_FILE"]).write_text(str(pages_asked))
    page = [{"sessionId": f"s-{pages_asked}-{n}", "agent": {"name": "rough"}} for n in range(100)]
    return JSONResponse({"sessions": page, "next": f"page-{pages_asked + 1}"})


async def session(request: Request) -> Response:
    return JSONResponse({"sessionId": "rough-1", "agent": {"name": "rough"}})


async def get_history(request: Request) -> Response:
    return JSONResponse({"history": {"full": history}})


async def turn(request: Request) -> Response:
    body = await request.json()
    record(body)
    messages = body["messages"]
    first = messages[0]
    if first.get("role") == "user":
        history.append(first)
        word = str(first.get("content")).strip()
        if word == "xss":
            return StreamingResponse(stream(hostile_events()), media_type="text/event-stream")
        if word in RAW_STREAMS:
            return StreamingResponse(RAW_STREAMS[word](), media_type="text/event-stream")
        if word == "unknown":
            return StreamingResponse(stream(unknown_events()), media_type="text/event-stream")
        if word == "other-session":
            return StreamingResponse(stream(other_session_events()), media_type="text/event-stream")
        if word == "http-500":
            return PlainTextResponse("model exploded: upstream timeout", status_code=500)
        if word == "no-stop":
            call = {"toolCallId": "c-read", "name": "read_file", "input": {"path": "notes.txt"}}
            history.append({"role": "assistant", "content": [{"type": "tool_use", **call}]})
            events = [("turn_start", {}), ("text_delta", {"delta": "Reading. "}), ("tool_call", call)]
        elif word == "effect-and-deploy":
            effect = {"toolCallId": "c-effect", "name": "run_command",
                      "input": {"command": "sh", "args": ["-c", "echo ran >> ran.log"]}}  # fmt: skip
            deploy = {"toolCallId": "c-deploy", "name": "deploy", "input": {"branch": "main"}}
            history.append(
                {"role": "assistant", "content": [{"type": "tool_use", **effect}, {"type": "tool_use", **deploy}]}
            )
            events = [
                ("turn_start", {}),
                ("tool_call", effect),
                ("tool_call", deploy),
                ("turn_stop", {"stopReason": "tool_use"}),
            ]
        elif word == "double-error":
            events = [("turn_start", {}), ("text_delta", {"delta": "Thinking about it"}),
                      ("turn_stop", {"stopReason": "error"}), ("turn_stop", {"stopReason": "error"})]  # fmt: skip
        elif word == "granted-no-result":
            call = {"toolCallId": "c-deploy", "name": "deploy", "input": {"branch": "main"}}
            history.append({"role": "assistant", "content": [{"type": "tool_use", **call}]})
            events = [("turn_start", {}), ("tool_call", call), ("turn_stop", {"stopReason": "tool_use"})]
        else:
            events = [("turn_start", {}), ("text_delta", {"delta": "ok"}), ("turn_stop", {"stopReason": "end_turn"})]
        return StreamingResponse(stream(events), media_type="text/event-stream")
    # The re-submission: tool results and permissions.
    said = []
    for message in messages:
        if message.get("role") == "tool":
            history.append(message)
            said.append(f"{message['toolCallId']} said {json.dumps(message.get('content'))}")
        elif message.get("role") == "tool_permission" and message.get("granted"):
            history.append({"role": "tool", "toolCallId": message["toolCallId"], "content": '"deployed to preview"'})
            said.append(f"{message['toolCallId']} ran")
    events = [("turn_start", {}), ("text_delta", {"delta": "; ".join(said)}), ("turn_stop", {"stopReason": "end_turn"})]
    return StreamingResponse(stream(events), media_type="text/event-stream")


app = Starlette(
    routes=[
        Route("/meta", meta),
        Route("/sessions", create, methods=["POST"]),
        Route("/sessions", listing, methods=["GET"]),
        Route("/sessions/{session_id}", session),
        Route("/sessions/{session_id}/history", get_history),
        Route("/sessions/{session_id}/turns", turn, methods=["POST"]),
    ]
)

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    uvicorn.run(app, host="127.0.0.1", port=parser.parse_args().port, log_level="warning")
