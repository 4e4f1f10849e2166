"""A person the server knows: who signed in (by token, an OpenID provider or a trusted proxy's header)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Person:
    """Someone signed in. ``id`` is stable across sign-ins (the provider's subject, the proxy's user name); the
    rest is what the provider or proxy said last."""

    id: str
    name: str = ""
    email: str | None = None
    groups: frozenset[str] = field(default_factory=frozenset)
    admin: bool = False

    @property
    def label(self) -> str:
        """What a card or a header shows: the name, else the id."""
        return self.name or self.id


LOCAL = Person(id="local", name="you", admin=True)
"""The one person of token mode (``WEBCLIENT_AUTH=token``): whoever has the token owns everything."""
