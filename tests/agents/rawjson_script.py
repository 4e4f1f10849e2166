"""Raw JSON-RPC test agent: obeys commands sent as requests, writing exactly the bytes it is told to.

Standalone script (stdlib only), run as ``sys.executable rawjson_script.py``. Methods:

* ``echo`` -> params;  ``env`` {names} -> {cwd, vars};  ``digest`` {data} -> {len, sha256}
* ``big`` {size} -> {data: big_text(size)}  (the same pattern the tests rebuild)
* ``emit`` {hex: [...], collect: n} -> writes each hex-decoded blob to stdout as is, then reads n messages
  from stdin and returns them as {collected: [...]}
* ``ask`` {method, params} -> sends that request to the client, returns {received: <its response>}
* ``flood`` {count, slow_at} -> notifications ``n`` {i} for i in range(count), with request ``slow``
  (id "slow") sent just before notification slow_at; returns {slow: <its response>}
* ``stderr`` {bytes} -> writes that many bytes of stderr (lines of 1 KiB) first
* ``exit`` {code} -> exits at once without answering
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any

_in = sys.stdin.buffer
_out = sys.stdout.buffer


def big_text(size: int) -> str:
    pattern = 'abc\u00e9\u20ac\U0001f600"\\\n\t'
    return (pattern * (size // len(pattern) + 1))[:size]


def send(message: dict[str, Any], flush: bool = True) -> None:
    _out.write(json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")
    if flush:
        _out.flush()


def read_message() -> Any:
    while True:
        line = _in.readline()
        if not line:
            sys.exit(0)  # stdin closed: a well-behaved agent leaves
        if line.strip():
            return json.loads(line)


def wait_response(request_id: str) -> Any:
    while True:
        message = read_message()
        if isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
            return message


def handle(method: str, params: Any) -> Any:
    if method == "echo":
        return params
    if method == "env":
        return {"cwd": os.getcwd(), "vars": {name: os.environ.get(name) for name in params["names"]}}
    if method == "digest":
        data = params["data"].encode()
        return {"len": len(params["data"]), "sha256": hashlib.sha256(data).hexdigest()}
    if method == "big":
        return {"data": big_text(params["size"])}
    if method == "emit":
        for blob in params["hex"]:
            _out.write(bytes.fromhex(blob))
        _out.flush()
        return {"collected": [read_message() for _ in range(params.get("collect", 0))]}
    if method == "ask":
        send({"jsonrpc": "2.0", "id": "ask-1", "method": params["method"], "params": params.get("params")})
        return {"received": wait_response("ask-1")}
    if method == "flood":
        for i in range(params["count"]):
            if i == params["slow_at"]:
                send({"jsonrpc": "2.0", "id": "slow", "method": "slow", "params": {"before": i}}, flush=False)
            send({"jsonrpc": "2.0", "method": "n", "params": {"i": i}}, flush=False)
        _out.flush()
        return {"slow": wait_response("slow")}
    if method == "stderr":
        line = b"e" * 1023 + b"\n"
        for _ in range(params["bytes"] // len(line)):
            sys.stderr.buffer.write(line)
        sys.stderr.buffer.write(b"e" * (params["bytes"] % len(line)))
        sys.stderr.buffer.flush()
        return {"ok": True}
    if method == "exit":
        _out.flush()
        os._exit(params["code"])
    raise LookupError(method)


def main() -> None:
    while True:
        message = read_message()
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            continue  # notifications and stray responses are not for us
        try:
            result = handle(message["method"], message.get("params"))
        except LookupError:
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}})
        else:
            send({"jsonrpc": "2.0", "id": message["id"], "result": result})


if __name__ == "__main__":
    main()
