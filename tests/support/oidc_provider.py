"""oidc-provider-mock (from PyPI) as the tests run it: the same program, with PKCE enforced.

Its releases (0.3 for Python 3.11, 0.4 for 3.12 and later) accept ``code_challenge`` but never check
``code_verifier``, so a client that got PKCE wrong would still sign in. This launcher registers Authlib's own PKCE
check (``CodeChallenge``, here requiring S256 of every client) on the provider's authorization-code grant and keeps
each code's challenge, so a sign-in without a challenge, or without the right verifier, is refused, as by a real
provider that requires PKCE.
Run as ``python -m tests.support.oidc_provider`` with the provider's own options (``--port``, ``--user-claims``...).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import authlib.integrations.flask_oauth2 as flask_oauth2
from authlib.oauth2.rfc6749.errors import InvalidRequestError
from authlib.oauth2.rfc7636 import CodeChallenge
from oidc_provider_mock import _app, _storage
from oidc_provider_mock.__main__ import run


@dataclasses.dataclass(kw_only=True, frozen=True)
class ChallengedCode(_storage.AuthorizationCode):
    """An authorization code with the PKCE challenge it was issued for."""

    code_challenge: str | None = None
    code_challenge_method: str | None = None


_save_code = _app.AuthorizationCodeGrant.save_authorization_code


def save_authorization_code(self: _app.AuthorizationCodeGrant, code: str, request: Any) -> None:
    _save_code(self, code, request)
    saved = _app.storage.get_authorization_code(code)
    assert saved is not None
    data = request.payload.data
    fields = {f.name: getattr(saved, f.name) for f in dataclasses.fields(saved)}
    _app.storage.store_authorization_code(
        ChallengedCode(
            **fields,
            code_challenge=data.get("code_challenge"),
            code_challenge_method=data.get("code_challenge_method"),
        )
    )


class S256Required(CodeChallenge):
    """PKCE with S256 from every client, confidential ones too (Authlib asks it of public clients only)."""

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge") or data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("PKCE is required here: send code_challenge with code_challenge_method=S256")
        super().validate_code_challenge(grant, redirect_uri)


_register_grant = flask_oauth2.AuthorizationServer.register_grant


def register_grant(
    self: flask_oauth2.AuthorizationServer, grant_cls: type, extensions: list[Any] | None = None
) -> None:
    if grant_cls is _app.AuthorizationCodeGrant:
        extensions = [*(extensions or []), S256Required(required=True)]
    _register_grant(self, grant_cls, extensions)


_app.AuthorizationCodeGrant.save_authorization_code = save_authorization_code  # type: ignore[method-assign]
flask_oauth2.AuthorizationServer.register_grant = register_grant  # type: ignore[method-assign]

if __name__ == "__main__":
    run()
