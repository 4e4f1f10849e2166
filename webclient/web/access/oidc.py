"""Signing in with the company's OpenID Connect provider (``WEBCLIENT_AUTH=oidc``): the authorization code flow
with PKCE, done by Authlib.

:meth:`OidcClient.start` makes the URL the browser is sent to (a fresh ``state``, ``nonce`` and PKCE verifier, kept
here for :data:`PENDING_SECONDS`); :meth:`OidcClient.finish` takes what the provider sent back to our callback,
exchanges the code (with the verifier), checks the ID token (signature against the provider's keys, issuer,
audience, expiry, nonce, at_hash) and returns its claims, with the userinfo answer's added. Nothing here knows
Starlette or our people: the routes are in :mod:`webclient.web.signin_oidc`.

What is pending is kept where `StartedSignIns` keeps it: with a store, in the store (`webclient.store.signins_started`),
so that the provider may send the browser back to any instance behind the proxy, or to this one after a restart, and
the sign-in is finished once; without one, in this process's memory.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote

import httpx
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri  # type: ignore[import-untyped]
from authlib.oauth2.rfc7636 import create_s256_code_challenge  # type: ignore[import-untyped]
from authlib.oidc.core import CodeIDToken  # type: ignore[import-untyped]
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from joserfc.jws import JWSRegistry

PENDING_SECONDS = 600
"""How long a sign-in may take at the provider (from our redirect to its callback)."""
MAX_PENDING = 10_000
"""Sign-ins started and not finished that are kept at most (the oldest go first): a flood cannot fill memory."""
LEEWAY_SECONDS = 120
"""Clock skew allowed between us and the provider when checking the ID token's times."""
HTTP_TIMEOUT = 10.0


class SignInFailed(Exception):
    """A sign-in that did not work, with the sentence the sign-in page shows."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


@dataclass(frozen=True)
class Pending:
    """What a started sign-in needs at the callback."""

    verifier: str
    nonce: str
    redirect_uri: str
    next_path: str
    binding: str
    """The SHA-256 of a random value the browser that started this sign-in holds in a cookie: only that browser may
    finish it (and whoever reads where it is kept cannot make that cookie)."""


def binding_digest(binding: str) -> str:
    return hashlib.sha256(binding.encode()).hexdigest()


class StartedSignIns(Protocol):
    """Where sign-ins started and not finished wait for their callback, each for `PENDING_SECONDS` at most."""

    async def keep(self, state: str, pending: Pending) -> None: ...

    async def take(self, state: str) -> Pending | None:
        """The sign-in ``state`` names, taken away: a second caller gets None; so does one that came too late."""
        ...


class InMemory:
    """Started sign-ins in this process's memory (a server without a store): a restart forgets them, and the callback
    then asks the person to sign in again."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[Pending, float]] = {}

    async def keep(self, state: str, pending: Pending) -> None:
        now = time.monotonic()
        for old in [s for s, (_, started) in self._pending.items() if now - started > PENDING_SECONDS]:
            del self._pending[old]
        while len(self._pending) >= MAX_PENDING:
            del self._pending[next(iter(self._pending))]
        self._pending[state] = (pending, now)

    async def take(self, state: str) -> Pending | None:
        pending, started = self._pending.pop(state, (None, 0.0))
        return pending if time.monotonic() - started <= PENDING_SECONDS else None


class OidcClient:
    """One provider: its discovery document and keys (fetched once), and the sign-ins under way."""

    def __init__(self, issuer: str, client_id: str, client_secret: str, scopes: str) -> None:
        self.issuer = issuer.rstrip("/")
        self.client_id = client_id
        self.client_secret = client_secret
        self.scopes = scopes
        self._metadata: dict[str, Any] | None = None
        self._keys: KeySet | None = None
        self.started: StartedSignIns = InMemory()
        """Where the sign-ins under way are kept: the store's, once the server has one (`webclient.web.app`)."""

    async def metadata(self) -> dict[str, Any]:
        """The provider's discovery document; its ``issuer`` must be the one configured (OpenID Discovery 4.3)."""
        if self._metadata is None:
            url = self.issuer + "/.well-known/openid-configuration"
            try:
                async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as http:
                    response = await http.get(url)
                    response.raise_for_status()
                    metadata = response.json()
            except (httpx.HTTPError, ValueError) as error:
                raise SignInFailed(f"The sign-in provider did not answer ({url}: {error}).") from error
            if not isinstance(metadata, dict) or str(metadata.get("issuer", "")).rstrip("/") != self.issuer:
                raise SignInFailed(f"The sign-in provider at {url} names another issuer; check WEBCLIENT_OIDC_ISSUER.")
            self._metadata = metadata
        return self._metadata

    async def start(self, redirect_uri: str, next_path: str, binding: str) -> str:
        """The provider's authorization URL for a new sign-in that comes back to ``redirect_uri``, to be finished by
        the browser that holds ``binding``."""
        metadata = await self.metadata()
        verifier = secrets.token_urlsafe(64)  # 86 characters of [A-Za-z0-9_-]: RFC 7636 asks for 43 to 128
        nonce = secrets.token_urlsafe(24)
        state = secrets.token_urlsafe(24)
        url = prepare_grant_uri(
            metadata["authorization_endpoint"],
            client_id=self.client_id,
            response_type="code",
            redirect_uri=redirect_uri,
            scope=self.scopes,
            state=state,
            nonce=nonce,
            code_challenge=create_s256_code_challenge(verifier),
            code_challenge_method="S256",
        )
        await self.started.keep(state, Pending(verifier, nonce, redirect_uri, next_path, binding_digest(binding)))
        return str(url)

    async def finish(self, params: Mapping[str, str], binding: str) -> tuple[dict[str, Any], str]:
        """The claims of the person the provider signed in (ID token, then userinfo) and where they were going,
        from the callback's query parameters and the starting browser's ``binding``. Raises :class:`SignInFailed`."""
        state = params.get("state", "")
        pending = await self.started.take(state) if state else None
        if "error" in params:  # whether or not it names the sign-in (some providers leave the state out)
            detail = params.get("error_description") or params["error"]
            raise SignInFailed(f"The sign-in provider refused: {detail[:300]}")
        if pending is None:
            raise SignInFailed("That sign-in was not started here or took too long; sign in again.")
        if not hmac.compare_digest(binding_digest(binding).encode(), pending.binding.encode()):
            raise SignInFailed("That sign-in was started in another browser; sign in again here.")
        code = params.get("code")
        if not code:
            raise SignInFailed("The sign-in provider sent no code back; sign in again.")
        metadata = await self.metadata()
        token = await self._token(metadata, code, pending)
        claims = await self._id_token_claims(token, pending.nonce)
        claims.update(await self._userinfo(metadata, token, claims["sub"]))
        return claims, pending.next_path

    async def _token(self, metadata: Mapping[str, Any], code: str, pending: Pending) -> dict[str, Any]:
        """The token endpoint's answer to the code and the PKCE verifier (RFC 6749 4.1.3, RFC 7636 4.5). The client
        authenticates with HTTP Basic (the default), or in the form when the provider takes only that."""
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": pending.redirect_uri,
            "code_verifier": pending.verifier,
        }
        methods = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        headers = {"Accept": "application/json"}
        if "client_secret_basic" in methods:
            pair = f"{quote(self.client_id, safe='')}:{quote(self.client_secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        else:
            form |= {"client_id": self.client_id, "client_secret": self.client_secret}
        try:
            async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as http:
                response = await http.post(metadata["token_endpoint"], data=form, headers=headers)
                answer = response.json()
        except (httpx.HTTPError, ValueError) as error:
            raise SignInFailed(f"The sign-in provider did not answer the sign-in ({error}).") from error
        if not isinstance(answer, dict) or response.status_code != 200 or "error" in answer:
            detail = answer.get("error_description") or answer.get("error") if isinstance(answer, dict) else None
            raise SignInFailed(f"The sign-in provider did not accept the sign-in ({detail or response.status_code}).")
        return answer

    async def _key_set(self, metadata: Mapping[str, Any], force: bool = False) -> KeySet:
        if self._keys is None or force:
            try:
                async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as http:
                    response = await http.get(metadata["jwks_uri"])
                    response.raise_for_status()
                    self._keys = KeySet.import_key_set(response.json())
            except (httpx.HTTPError, ValueError, KeyError, JoseError) as error:
                raise SignInFailed(f"The sign-in provider's keys could not be read ({error}).") from error
        return self._keys

    async def _id_token_claims(self, token: Mapping[str, Any], nonce: str) -> dict[str, Any]:
        """The ID token's claims once its signature, issuer, audience, times, nonce and at_hash are right."""
        raw = token.get("id_token")
        if not isinstance(raw, str):
            raise SignInFailed("The sign-in provider sent no ID token; is the scope 'openid' asked for?")
        metadata = await self.metadata()
        algorithms = list(metadata.get("id_token_signing_alg_values_supported") or ["RS256"])
        registry = JWSRegistry(algorithms=[a for a in algorithms if a != "none"], strict_check_header=False)
        try:
            try:
                decoded = jwt.decode(raw, await self._key_set(metadata), registry=registry)
            except JoseError:  # the provider may have rotated its keys since we read them: read them once more
                decoded = jwt.decode(raw, await self._key_set(metadata, force=True), registry=registry)
            claims = CodeIDToken(
                decoded.claims,
                decoded.header,
                {"iss": {"essential": True, "values": [self.issuer]}, "aud": {"essential": True}},
                {"nonce": nonce, "client_id": self.client_id, "access_token": token.get("access_token")},
            )
            claims.validate(leeway=LEEWAY_SECONDS)
        except JoseError as error:
            raise SignInFailed(f"The sign-in provider's ID token is not valid ({error}).") from error
        audience = claims.get("aud")
        if self.client_id not in (audience if isinstance(audience, list) else [audience]):
            raise SignInFailed("The sign-in provider's ID token is for another client.")
        if not isinstance(claims.get("sub"), str) or not claims["sub"]:
            raise SignInFailed("The sign-in provider's ID token names nobody.")
        return dict(claims)

    async def _userinfo(self, metadata: Mapping[str, Any], token: Mapping[str, Any], sub: str) -> dict[str, Any]:
        """The userinfo answer (groups often come only there), when the provider has the endpoint and it names the
        same person; else nothing."""
        endpoint = metadata.get("userinfo_endpoint")
        access = token.get("access_token")
        if not endpoint or not isinstance(access, str):
            return {}
        try:
            async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as http:
                response = await http.get(endpoint, headers={"Authorization": f"Bearer {access}"})
                response.raise_for_status()
                info = response.json()
        except (httpx.HTTPError, ValueError):
            return {}
        if not isinstance(info, dict) or info.get("sub") != sub:
            return {}
        return {k: v for k, v in info.items() if k not in ("iss", "aud", "exp", "iat", "nonce")}


def groups_of(claims: Mapping[str, Any], claim: str) -> frozenset[str]:
    """The groups in ``claim``: a list of names, or one string of names separated by commas or spaces."""
    value = claims.get(claim)
    if isinstance(value, str):
        names = value.replace(",", " ").split()
    elif isinstance(value, list | tuple):
        names = [str(v) for v in value if isinstance(v, str | int)]
    else:
        names = []
    return frozenset(n.strip() for n in names if n.strip())
