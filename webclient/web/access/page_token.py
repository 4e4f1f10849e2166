"""The page token (CSRF) as a page carries it: masked afresh on every page, so that a compressed page's length says
nothing about it (BREACH; `webclient.web.delivery.compression` says why pages are compressed all the same).

A masked token is a random pad and the token XOR the pad, in hex (as Django's ``CSRF_TOKEN`` is masked): the pad
differs on every page, the token under it does not. The access guard takes the masked form or the token itself.
"""

from __future__ import annotations

import hmac
import secrets


def masked(token: str) -> str:
    """``token`` under a fresh pad: twice its length in bytes, as hex."""
    data = token.encode()
    pad = secrets.token_bytes(len(data))
    return (pad + bytes(a ^ b for a, b in zip(data, pad, strict=True))).hex()


def unmasked(value: str) -> str | None:
    """The token a :func:`masked` value holds, or None when it is not one."""
    if len(value) % 4 or len(value) > 4096:
        return None
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        return None
    half = len(raw) // 2
    data = bytes(a ^ b for a, b in zip(raw[half:], raw[:half], strict=True))
    return data.decode("latin-1")


def token_matches(given: str, token: str) -> bool:
    """Whether ``given`` (from a form or a header) is ``token``, masked or not."""
    plain = unmasked(given)
    return hmac.compare_digest(given.encode(), token.encode()) or (
        plain is not None and hmac.compare_digest(plain.encode("latin-1"), token.encode())
    )
