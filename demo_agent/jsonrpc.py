"""JSON-RPC 2.0 over newline-delimited JSON on stdin and stdout: the demo agent's whole transport.

The official Python SDK's ``Connection`` did this job, but importing it builds every pydantic model of the SDK: a
third of a second of CPU before the agent could answer ``initialize``, at every session a person starts. This does
what the agent used of it: each incoming request and notification handled in a task of its own, answers matched to the
requests sent by id, errors as `RequestError`, a line that is not JSON logged and skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["Connection", "RequestError", "stdio_streams"]

logger = logging.getLogger(__name__)

MethodHandler = Callable[[str, Any, bool], Awaitable[Any]]
"""``handler(method, params, is_notification)``: a request's result, or raise `RequestError`."""


class RequestError(Exception):
    """A JSON-RPC error: raised by a handler to answer with it, and by `Connection.send_request` when answered one."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data

    @classmethod
    def invalid_request(cls, data: Any = None) -> RequestError:
        return cls(-32600, "Invalid request", data)

    @classmethod
    def method_not_found(cls, method: str) -> RequestError:
        return cls(-32601, "Method not found", {"method": method})

    @classmethod
    def invalid_params(cls, data: Any = None) -> RequestError:
        return cls(-32602, "Invalid params", data)

    @classmethod
    def internal_error(cls, data: Any = None) -> RequestError:
        return cls(-32603, "Internal error", data)

    def to_error_obj(self) -> dict[str, Any]:
        return {"code": self.code, "message": str(self), "data": self.data}


async def stdio_streams(limit: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """This process's stdin and stdout as asyncio streams; a line may be up to ``limit`` bytes before it is read in
    pieces."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


class Connection:
    """One JSON-RPC peer on a pair of streams."""

    def __init__(self, handler: MethodHandler, writer: asyncio.StreamWriter, reader: asyncio.StreamReader) -> None:
        self._handler = handler
        self._writer = writer
        self._reader = reader
        self._ids = itertools.count()
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    async def send_request(self, method: str, params: Any = None) -> Any:
        """The result of ``method``; raises `RequestError` for an error answer, ConnectionError once closed."""
        self._check_open()
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            return await future
        finally:
            self._pending.pop(request_id, None)

    async def send_notification(self, method: str, params: Any = None) -> None:
        self._check_open()
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def main_loop(self) -> None:
        """Read and dispatch messages until the other side closes its end."""
        while (line := await self._read_line()) is not None:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                logger.exception("a line that is not JSON-RPC: skipped")
                continue
            if isinstance(message, dict):
                self._dispatch(message)
        self._reject_pending()

    async def close(self) -> None:
        """Cancel what is still being handled and fail every request still waiting for its answer."""
        self._closed = True
        self._reject_pending()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            self._writer.close()

    def _dispatch(self, message: dict[str, Any]) -> None:
        if message.get("method") is not None:
            task = asyncio.ensure_future(self._answer(message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif "id" in message and (future := self._pending.get(message["id"])) is not None and not future.done():
            if "error" in message:
                error = message["error"] or {}
                future.set_exception(
                    RequestError(error.get("code", -32603), error.get("message", "Error"), error.get("data"))
                )
            else:
                future.set_result(message.get("result"))

    async def _answer(self, message: dict[str, Any]) -> None:
        method, is_notification = message["method"], "id" not in message
        try:
            result = await self._handler(method, message.get("params"), is_notification)
            answer: dict[str, Any] = {"result": result}
        except RequestError as error:
            answer = {"error": error.to_error_obj()}
        except Exception as error:
            logger.exception("handling %s failed", method)
            answer = {"error": RequestError.internal_error({"details": str(error)}).to_error_obj()}
        if not is_notification:
            with contextlib.suppress(ConnectionError):
                await self._send({"jsonrpc": "2.0", "id": message["id"], **answer})

    async def _send(self, payload: dict[str, Any]) -> None:
        # One write per message: lines never interleave, and they leave in the order they were sent.
        self._writer.write((json.dumps(payload, separators=(",", ":")) + "\n").encode())
        await self._writer.drain()

    async def _read_line(self) -> bytes | None:
        """The next line, however long (read in pieces past the reader's limit); None at the end of the input."""
        pieces: list[bytes] = []
        while True:
            try:
                pieces.append(await self._reader.readuntil(b"\n"))
                return b"".join(pieces)
            except asyncio.LimitOverrunError as overrun:
                pieces.append(await self._reader.readexactly(overrun.consumed))
            except asyncio.IncompleteReadError as end:
                pieces.append(end.partial)
                return b"".join(pieces) or None

    def _check_open(self) -> None:
        if self._closed or self._reader.at_eof():
            raise ConnectionError("Connection closed")

    def _reject_pending(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("Connection closed"))
