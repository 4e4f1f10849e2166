"""A generic asyncio JSON-RPC 2.0 peer over newline-delimited JSON.

One `Peer` per connection (for ACP: one per agent process). It knows nothing of ACP or HTML; the messages
and errors it speaks are in `webclient.acp.jsonrpc`.

Choices worth knowing:

* Incoming messages are handled strictly in arrival order by the read loop. Responses resolve their
  futures at once; notifications call ``on_notification`` synchronously; requests call ``on_request``
  synchronously to obtain an awaitable, which is then awaited in its own task (so a request waiting for
  a user's click never blocks the loop). An ``async def`` handler only *creates* its coroutine in the
  loop, so a handler whose side effects must be ordered with the surrounding notifications should be a
  plain function that does that work and then returns an awaitable.
* A line may be a JSON array (a batch, allowed by ACP v2). Its entries are handled one by one, in order,
  and responses to requests inside a batch are sent individually rather than as one array.
* Undecodable or invalid lines are reported to ``on_garbage`` and skipped, never answered: JSON-RPC
  would answer ``-32700``, but an agent that printed a terminal prompt on stdout (gemini's OAuth flow)
  reads whatever comes back on stdin as the user's typing. A line whose JSON follows terminal escape
  codes or other junk is recovered (`jsonrpc.recover`): the junk is reported to ``on_garbage`` and the
  message handled. Blank lines are skipped silently.
* A line longer than ``max_line_bytes`` is dropped as it streams (never held beyond the limit),
  reported to ``on_garbage`` and to ``on_oversized``.
* Every line that is read or written goes to ``on_traffic`` as text plus the message decoded from it (None
  for a line that is not JSON), so that a protocol log need not decode each line a second time; it is
  called before the message is handled, in arrival order.
* A flood is mostly notifications: a line that decodes to one goes from the read loop to
  ``on_notification`` with no call in between.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from webclient.acp.jsonrpc import (
    ConnectionClosed,
    InvalidRequest,
    MessageWriter,
    NotificationHandler,
    RequestCancelled,
    RequestHandler,
    RpcError,
    TrafficHandler,
    decode,
    encode,
    error_for,
    recover,
    valid_id,
)

__all__ = ["Peer"]

logger = logging.getLogger(__name__)

_READ_CHUNK = 1 << 18  # the pipe transport reads at most 256 KiB at a time, so larger buys nothing
_GARBAGE_PREVIEW = 200  # characters of a bad line passed to on_garbage


class Peer:
    """One end of a JSON-RPC connection: sends requests/notifications, dispatches what arrives."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter | MessageWriter,
        *,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
        on_traffic: TrafficHandler | None = None,
        on_garbage: Callable[[str, str], None] | None = None,
        on_oversized: Callable[[int], None] | None = None,
        max_line_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._on_request = on_request
        self._on_notification = on_notification
        self._on_traffic = on_traffic
        self._on_garbage = on_garbage
        self._on_oversized = on_oversized
        self._max_line_bytes = max_line_bytes
        self._next_id = 0
        self.stray_responses = 0
        """Responses whose id matched no request of ours (an agent answering with wrong ids)."""
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._answering: dict[Any, asyncio.Future[Any]] = {}
        """The peer's requests still waiting for our answer, whose handler gave a future: ``$/cancel_request`` cancels
        one (the question it asked is withdrawn, and it gets the ``-32800`` error)."""
        self._write_lock = asyncio.Lock()
        self._started = False
        self._input_ended = False
        self._stopped = False  # close() was called

    @property
    def closed(self) -> bool:
        """True once the peer's input has ended or close() was called; requests then fail."""
        return self._stopped or self._input_ended

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request and return its result.

        Raises:
            RpcError: the peer answered with an error (a subclass for the standard codes).
            ConnectionClosed: the connection closed before an answer arrived.
        """
        if self.closed:
            raise ConnectionClosed(f"cannot send {method!r}: connection closed")
        self._next_id += 1
        request_id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._send(message)
            return await future
        finally:
            # Also on cancellation: a late answer is then logged as unknown and ignored.
            self._pending.pop(request_id, None)

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification; a closed or broken connection is logged, not raised."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._send_quietly(message)

    async def run(self) -> None:
        """Read and dispatch messages until the input ends, then fail pending requests and return."""
        if self._started:
            raise RuntimeError("Peer.run() may only be called once")
        self._started = True
        read = self._reader.read
        handle = self._handle_line
        limit = self._max_line_bytes
        partial = bytearray()  # the unfinished line; bytearray so appends of a huge line stay linear
        skipping = False  # inside an over-long line: drop bytes until its newline
        try:
            while True:
                try:
                    chunk = await read(_READ_CHUNK)
                except (ConnectionError, OSError) as exc:
                    logger.warning("JSON-RPC read failed: %s", exc)
                    break
                if not chunk:
                    break
                newline = chunk.find(b"\n")
                if newline < 0:
                    if not skipping:
                        if len(partial) + len(chunk) > limit:
                            self._too_long(partial or chunk)
                            partial.clear()
                            skipping = True
                        else:
                            partial += chunk
                    continue
                if skipping:
                    skipping = False
                elif partial:
                    if len(partial) + newline > limit:
                        self._too_long(partial)
                    else:
                        partial += chunk[:newline]
                        handle(partial)
                    partial.clear()
                else:
                    handle(chunk[:newline])
                lines = chunk[newline + 1 :].split(b"\n")
                rest = lines.pop()
                for index, line in enumerate(lines):
                    handle(line)
                    if index % 64 == 63:  # a flood must not starve other sessions; only this loop reads, so order holds
                        await asyncio.sleep(0)
                if len(rest) > limit:
                    self._too_long(rest)
                    skipping = True
                elif rest:
                    partial += rest
            if partial and not skipping:
                handle(partial)  # a last line without its newline
        finally:
            self._input_ended = True
            self._fail_pending("input ended")

    async def close(self) -> None:
        """Stop: fail pending requests, cancel in-flight incoming requests, close the writer.

        The read loop itself ends when the input ends (for a subprocess: when it exits); messages
        read after close() are dropped.
        """
        self._stopped = True
        self._fail_pending("closed")
        current = asyncio.current_task()
        tasks = [task for task in self._tasks if task is not current]
        for task in tasks:
            task.cancel()
        try:
            self._writer.close()
        except Exception:  # closing a broken transport must not stop the shutdown
            logger.debug("closing JSON-RPC writer failed", exc_info=True)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    # -- reading ---------------------------------------------------------------------------------

    def _handle_line(self, line: bytes | bytearray) -> None:
        if self._stopped:
            return
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line or (line[0] != 0x7B and line.isspace()):  # 0x7B: "{", how nearly every line starts
            return
        if len(line) > self._max_line_bytes:
            self._too_long(line)
            return
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            self._garbage("invalid UTF-8", line[:_GARBAGE_PREVIEW].decode("utf-8", errors="replace"))
            return
        try:
            message = decode(text)
        except (ValueError, RecursionError):
            recovered = recover(text)
            if recovered is None:
                if self._on_traffic is not None:
                    self._on_traffic("in", text, None)
                self._garbage("invalid JSON", text[:_GARBAGE_PREVIEW])
                return
            message, junk = recovered
            self._garbage("junk before a JSON message, message kept", junk[:_GARBAGE_PREVIEW])
            text = text[len(junk) :]
        if self._on_traffic is not None:
            self._on_traffic("in", text, message)
        try:
            if type(message) is dict:
                method = message.get("method")
                if type(method) is str and "id" not in message:  # a notification: nearly every line of a flood
                    self._on_notification(method, message.get("params"))
                else:
                    self._handle_message(message)
            elif type(message) is list:
                if not message:
                    self._reply_error(None, InvalidRequest("Invalid Request: empty batch"))
                for entry in message:
                    self._handle_message(entry)
            else:
                self._reply_error(None, InvalidRequest("Invalid Request: not an object or array"))
        except Exception:  # a bug in a handler or in dispatch must not kill the connection
            logger.exception("JSON-RPC dispatch failed for %.200s", text)

    def _handle_message(self, message: Any) -> None:
        if type(message) is not dict:
            self._reply_error(None, InvalidRequest("Invalid Request: not an object"))
            return
        method = message.get("method")
        if method is not None:
            has_id = "id" in message
            request_id = message.get("id")
            if not isinstance(method, str) or (has_id and not valid_id(request_id)):
                self._reply_error(request_id if valid_id(request_id) else None, InvalidRequest())
            elif has_id:
                self._handle_request(request_id, method, message.get("params"))
            else:
                try:
                    self._on_notification(method, message.get("params"))
                except Exception:
                    logger.exception("notification handler failed for %r", method)
            return
        if "id" in message and ("result" in message or "error" in message):
            self._handle_response(message)
            return
        request_id = message.get("id")
        self._reply_error(request_id if valid_id(request_id) else None, InvalidRequest())

    def _handle_request(self, request_id: Any, method: str, params: Any) -> None:
        # Called synchronously so the handler's synchronous prefix runs in arrival order.
        try:
            pending: Awaitable[Any] | BaseException = self._on_request(method, params)
        except Exception as exc:
            pending = exc
        if isinstance(pending, asyncio.Future) and not pending.done() and isinstance(request_id, str | int):
            self._answering[request_id] = pending
            pending.add_done_callback(lambda _: self._answering.pop(request_id, None))
        self._spawn(self._answer(request_id, method, pending))

    def cancel_incoming(self, params: Any) -> None:
        """``$/cancel_request {requestId}`` (a notification, handed here by the owner): the peer no longer wants the
        answer to one of its requests."""
        request_id = params.get("requestId") if isinstance(params, dict) else None
        pending = self._answering.get(request_id) if isinstance(request_id, str | int) else None
        if pending is not None:
            pending.cancel()

    def _handle_response(self, message: dict[str, Any]) -> None:
        response_id = message["id"]
        if isinstance(response_id, float) and response_id.is_integer():
            response_id = int(response_id)  # a peer that round-tripped our id through a double
        future = self._pending.pop(response_id, None) if type(response_id) is int else None
        if future is None:
            self.stray_responses += 1
            logger.warning("JSON-RPC response for unknown id %r ignored", response_id)
            return
        if future.done():  # the request was cancelled meanwhile
            return
        if "error" in message:
            future.set_exception(RpcError.from_json(message["error"]))
        else:
            future.set_result(message.get("result"))

    def _too_long(self, start: bytes | bytearray) -> None:
        preview = bytes(start[:_GARBAGE_PREVIEW]).decode("utf-8", errors="replace")
        self._garbage(f"line longer than {self._max_line_bytes} bytes", preview)
        if self._on_oversized is not None:
            try:
                self._on_oversized(self._max_line_bytes)
            except Exception:
                logger.exception("on_oversized handler failed")

    def _garbage(self, reason: str, preview: str) -> None:
        if self._on_garbage is not None:
            try:
                self._on_garbage(reason, preview)
            except Exception:
                logger.exception("on_garbage handler failed")
        else:
            logger.warning("skipped JSON-RPC line (%s): %.200s", reason, preview)

    # -- answering and writing -------------------------------------------------------------------

    async def _answer(self, request_id: Any, method: str, pending: Awaitable[Any] | BaseException) -> None:
        if isinstance(pending, BaseException):
            error = error_for(method, pending)
        else:
            try:
                result = await pending
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise  # we are being cancelled (close()): no answer
                error = RequestCancelled()  # the handler's own work was cancelled
            except Exception as exc:
                error = error_for(method, exc)
            else:
                try:
                    await self._send({"jsonrpc": "2.0", "id": request_id, "result": result}, quiet=True)
                    return
                except (TypeError, ValueError) as exc:  # the result is not JSON-serializable
                    error = error_for(method, exc)
        await self._send_quietly({"jsonrpc": "2.0", "id": request_id, "error": error.to_json()})

    def _reply_error(self, request_id: Any, error: RpcError) -> None:
        self._spawn(self._send_quietly({"jsonrpc": "2.0", "id": request_id, "error": error.to_json()}))

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send_quietly(self, message: dict[str, Any]) -> None:
        await self._send(message, quiet=True)

    async def _send(self, message: dict[str, Any], *, quiet: bool = False) -> None:
        """Write one message; raises ConnectionClosed (or, if quiet, logs it) when that is impossible."""
        text = encode(message)
        try:
            data = (text + "\n").encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates (e.g. from a surrogateescape'd path): send them escaped
            text = json.dumps(message, separators=(",", ":"))
            data = (text + "\n").encode("utf-8")
        try:
            async with self._write_lock:
                if self._stopped or self._writer.is_closing():
                    raise ConnectionClosed("connection closed")
                if self._on_traffic is not None:
                    self._on_traffic("out", text, message)
                try:
                    self._writer.write(data)
                    await self._writer.drain()
                except (ConnectionError, OSError) as exc:
                    raise ConnectionClosed(f"write failed: {exc}") from exc
        except ConnectionClosed:
            if not quiet:
                raise
            logger.info("JSON-RPC message dropped, connection closed: %.200s", text)

    def _fail_pending(self, why: str) -> None:
        pending = list(self._pending.values())
        self._pending.clear()
        for future in pending:
            if not future.done():
                # One exception instance per future: a shared one would collect every traceback.
                future.set_exception(ConnectionClosed(f"connection {why} before the response arrived"))
