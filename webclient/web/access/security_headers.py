"""Content-Security-Policy and friends on every HTTP response, the access guard's refusals included."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


def frame_options(frame_ancestors: str) -> bytes | None:
    """``X-Frame-Options`` for browsers without CSP ``frame-ancestors``: it can say only ``'self'`` or
    ``'none'``; for a list of origins there is none (CSP wins in every current browser)."""
    value = frame_ancestors.strip()
    if value == "'self'":
        return b"SAMEORIGIN"
    if value == "'none'":
        return b"DENY"
    return None


class SecurityHeaders:
    """Content-Security-Policy and friends on every HTTP response."""

    def __init__(self, app: ASGIApp, frame_ancestors: str) -> None:
        self.app = app
        # No 'unsafe-inline' for styles either: an injected style attribute cannot dress up the page.
        self.csp = (
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "media-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
            f"form-action 'self'; frame-ancestors {frame_ancestors}"
        ).encode()
        self.frame_options = frame_options(frame_ancestors)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [
                    (b"content-security-policy", self.csp),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"same-origin"),
                ]
                if self.frame_options is not None:
                    headers.append((b"x-frame-options", self.frame_options))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
