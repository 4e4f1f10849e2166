"""JSON-RPC 2.0 messages as this client reads and writes them: errors, and lines to and from messages.

Generic (no ACP, no HTML); the connection itself is `webclient.acp.peer.Peer`.

* Errors are `RpcError` and a subclass per standard code (the code on the class); `error_for` is the one
  converter from a handler's exception to the error answered, `error_text` what a person reads.
* `decode` is ``json.loads`` for one line, faster: it calls the C scanner directly.
* `recover` finds a message that follows junk on its line (terminal escape codes, a full-screen prompt
  closing: ``ESC[?1049l{"jsonrpc":...}``) and returns it with the junk.
* The ``"jsonrpc": "2.0"`` member is not checked: being lenient costs nothing and some agents omit it.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Protocol

__all__ = [
    "AuthRequired",
    "ConnectionClosed",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "JsonValue",
    "MessageWriter",
    "MethodNotFound",
    "NotificationHandler",
    "ParseError",
    "RequestCancelled",
    "RequestHandler",
    "ResourceNotFound",
    "RpcError",
    "TrafficHandler",
    "decode",
    "encode",
    "error_for",
    "error_text",
    "recover",
    "valid_id",
]

logger = logging.getLogger(__name__)

JsonValue = Any
RequestHandler = Callable[[str, Any], Awaitable[Any]]
NotificationHandler = Callable[[str, Any], None]
TrafficHandler = Callable[[str, str, Any], None]
"""``(direction, text, message)``: ``in`` for a line read, ``out`` for one written, with the message as decoded
(or encoded); None when the line was not JSON (a line of JSON ``null`` is passed as None too)."""

_ERROR_DATA_CHARS = 500  # characters of an error's ``data`` shown to a person
# Junk a message may follow on its line: how far to look for it, and how many starts to try parsing.
_JUNK_PREFIX_CHARS = 4096
_RECOVERY_ATTEMPTS = 8
# A terminal escape sequence: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \\), or a two-byte escape.
_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[ -~])")
# The C scanner behind json.loads, called directly: decoding every line the agent writes is the hot path, and
# loads() adds two layers and two whitespace regex matches per line.
_scan: Callable[[str, int], tuple[Any, int]] = getattr(json.JSONDecoder(), "scan_once")  # untyped in typeshed


class RpcError(Exception):
    """An error to send or that was received. code/message/data as in JSON-RPC."""

    CODE: ClassVar[int] = -32603
    MESSAGE: ClassVar[str] = "Internal error"

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return f"{self.message} ({self.code})"

    def to_json(self) -> dict[str, Any]:
        """Return the JSON-RPC error object (``data`` only when set)."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @property
    def text(self) -> str:
        """What a person reads: the message plus what ``data`` holds (see `error_text`)."""
        return error_text(self.message, self.data)

    @classmethod
    def from_json(cls, error: Any) -> RpcError:
        """Build the error for a received error object; known codes give their subclass."""
        if not isinstance(error, dict) or not isinstance(error.get("code"), int):
            return InternalError("malformed error object in response", data=error)
        code: int = error["code"]
        message = error.get("message")
        message = message if isinstance(message, str) else ""
        subclass = _BY_CODE.get(code)
        if subclass is not None:
            return subclass(message, error.get("data"))
        return RpcError(code, message, error.get("data"))


class _StandardError(RpcError):
    """An RpcError whose code is fixed by the class."""

    def __init__(self, message: str | None = None, data: Any = None) -> None:
        super().__init__(self.CODE, message or self.MESSAGE, data)


class ParseError(_StandardError):
    CODE = -32700
    MESSAGE = "Parse error"


class InvalidRequest(_StandardError):
    CODE = -32600
    MESSAGE = "Invalid Request"


class MethodNotFound(_StandardError):
    CODE = -32601
    MESSAGE = "Method not found"


class InvalidParams(_StandardError):
    CODE = -32602
    MESSAGE = "Invalid params"


class InternalError(_StandardError):
    CODE = -32603
    MESSAGE = "Internal error"


class RequestCancelled(_StandardError):
    CODE = -32800
    MESSAGE = "Request cancelled"


class AuthRequired(_StandardError):
    CODE = -32000
    MESSAGE = "Authentication required"


class ResourceNotFound(_StandardError):
    CODE = -32002
    MESSAGE = "Resource not found"


_BY_CODE: dict[int, type[_StandardError]] = {
    c.CODE: c
    for c in (
        ParseError,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        RequestCancelled,
        AuthRequired,
        ResourceNotFound,
    )
}


class ConnectionClosed(Exception):
    """The connection is gone: the peer's input ended, a write failed, or close() was called."""


class MessageWriter(Protocol):
    """The part of `asyncio.StreamWriter` a Peer writes through."""

    def write(self, data: bytes, /) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...

    def is_closing(self) -> bool: ...


def error_text(message: str, data: Any) -> str:
    """A JSON-RPC error as a person reads it: ``message`` plus what ``data`` holds.

    Agents put the useful part in ``data``: codex ``{"message": "OPENAI_API_KEY is not set"}``, gemini
    ``{"details": "Cannot enable privileged approval modes in an untrusted folder."}``, others a string.
    An object with neither is shown as JSON; long data is cut to about 500 characters.
    """
    detail: str | None
    if isinstance(data, dict) and isinstance(data.get("message"), str) and data["message"].strip():
        detail = data["message"]
    elif isinstance(data, dict) and isinstance(data.get("details"), str) and data["details"].strip():
        detail = data["details"]
    elif isinstance(data, str):
        detail = data
    elif data is None or data == {} or data == []:
        detail = None
    else:
        try:
            detail = json.dumps(data, ensure_ascii=False, separators=(", ", ": "))
        except (TypeError, ValueError):
            detail = repr(data)
    message = message.strip() or "Error"
    if detail is None or not detail.strip() or detail.strip() == message:
        return message
    detail = detail.strip()
    if len(detail) > _ERROR_DATA_CHARS:
        detail = detail[: _ERROR_DATA_CHARS - 1] + "…"
    return f"{message}: {detail}"


def recover(text: str) -> tuple[Any, str] | None:
    """The JSON-RPC message that follows junk on a line (terminal escape codes, a prompt's leftovers), and
    the junk; None when there is none. Only a prefix of the line is searched, and a few starts tried."""
    position, attempts, limit = 0, 0, min(len(text), _JUNK_PREFIX_CHARS)
    while position < limit and attempts < _RECOVERY_ATTEMPTS:
        char = text[position]
        if char == "\x1b":
            escape = _ESCAPE.match(text, position)
            position = escape.end() if escape is not None else position + 1
            continue
        if char in "{[":
            attempts += 1
            try:
                message = decode(text[position:])
            except (ValueError, RecursionError):
                pass
            else:
                if _looks_like_jsonrpc(message):
                    return message, text[:position]
        position += 1
    return None


def _looks_like_jsonrpc(message: Any) -> bool:
    if type(message) is list:
        return bool(message) and all(_looks_like_jsonrpc(item) for item in message if type(item) is not list)
    return type(message) is dict and bool(message.keys() & {"jsonrpc", "method", "id"})


def valid_id(value: Any) -> bool:
    # JSON-RPC ids are strings, numbers or null; bool is an int subclass but not a valid id.
    return value is None or (isinstance(value, (str, int, float)) and not isinstance(value, bool))


def decode(text: str) -> Any:
    """json.loads, faster for the usual line; raises ValueError (or RecursionError) for bad JSON."""
    try:
        value, end = _scan(text, 0)
    except StopIteration:  # no value at the start: leading whitespace, or an error loads() will describe
        return json.loads(text)
    if end != len(text) and not text[end:].isspace():
        raise ValueError(f"extra data after the JSON value at {end}")
    return value


def encode(message: dict[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def error_for(method: str, exc: BaseException) -> RpcError:
    """The one converter from a handler's exception to the error we answer with."""
    if isinstance(exc, RpcError):
        return exc
    logger.error("handler for %r failed", method, exc_info=exc)
    return InternalError(str(exc) or type(exc).__name__)
