"""How an instance proves to another that it forwards a request (`webclient.web.cluster.forwarding`): a token derived
from the server key every instance of one service shares (``WEBCLIENT_SECRET_KEY``, which people's secrets need the
same everywhere anyway), sent in `HEADER` and compared in constant time. An address proves nothing; the token is
taken out of the request before anything further in sees it (`webclient.web.access.root_path`).

A request it proves is treated as one from the trusted proxy: its forwarded host, scheme and prefix are the browser's
as the forwarding instance saw them, and it is answered here, never forwarded again.
"""

from __future__ import annotations

import hashlib
import hmac

from starlette.types import Scope

HEADER = "x-webclient-instance"
IDENTITY = "x-webclient-instance-id"
"""The header ``/healthz`` names the instance in, among several of one service (no proof of anything: its id)."""
FORWARDED = "webclient.forwarded"
"""The scope's key: this request came from another instance, which proved it."""


def instance_token(server_key: bytes) -> bytes:
    """What every instance sharing ``server_key`` sends and accepts."""
    return hmac.new(server_key, b"webclient instance forwarding", hashlib.sha256).hexdigest().encode()


def proven(scope: Scope, token: bytes | None) -> bool:
    """Whether ``scope`` carries ``token`` (once) in `HEADER`."""
    if token is None:
        return False
    wanted = HEADER.encode()
    sent = [value for name, value in scope.get("headers", ()) if name.lower() == wanted]
    return len(sent) == 1 and hmac.compare_digest(sent[0].strip(), token)


def without_token(scope: Scope) -> Scope:
    wanted = HEADER.encode()
    return {**scope, "headers": [(n, v) for n, v in scope.get("headers", ()) if n.lower() != wanted]}
