"""Every page's template context, typed and documented, as datasette's ``Context``: a route builds its page's
dataclass (a subclass of :class:`BaseContext`, defined beside the route) and :func:`webclient.web.context.render`
turns it into the response, so what a template may read is written down once, each field with its docstring
(``tests/web/test_template_context.py`` checks that every field has one and that the template exists).

Imports nothing of ``web``, so the sign-in page (answered before routing, `webclient.web.access.signin_flow`) builds
one too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from webclient.people.person import Person
from webclient.render.urls import Urls


@dataclass(frozen=True, kw_only=True)
class BaseContext:
    """What ``base.html`` reads, on every page."""

    template: ClassVar[str]
    """The page's template, which extends ``base.html``."""

    urls: Urls
    """The app's URLs under the path prefix the request came through."""
    static: Callable[[str], str]
    """A file of ``static/`` → its URL (``urls.static``)."""
    csrf: str
    """The page's CSRF token, which every form it posts carries (empty for one signed in by no one)."""
    embedded: bool = False
    """Shown in a portal's iframe (``/embed``): no site chrome, the host's theme."""
    theme: str | None = None
    """An embedded page's theme (a word), from its host."""
    accent: str | None = None
    """An embedded page's accent colour (``#RRGGBB``), from its host."""
    message_origins: list[str] = field(default_factory=list)
    """The origins an embedded page talks to (``static/js/embed.js``)."""
    restarting: bool = False
    """The server is draining before it stops (`webclient.web.readiness`): every page says so."""

    def as_dict(self) -> dict[str, Any]:
        """The template's names: the fields, shallow (a field's value is passed as it is)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, kw_only=True)
class SignedInContext(BaseContext):
    """What every page behind the sign-in reads besides :class:`BaseContext` (its header, its forms)."""

    diff_mode: str
    """How diffs are laid out: ``unified`` or ``split`` (the ``diff_mode`` cookie)."""
    server_local: bool
    """The server listens on this machine only: a browser it opens (an agent's sign-in) is the person's own."""
    person: Person | None
    """Who the request comes from."""
    signin: str | None
    """The id of the signed-in session the request came with (it can sign out); None for a script's token."""
    signin_store: bool
    """Whether the store keeps signed-in sessions (the people page)."""
