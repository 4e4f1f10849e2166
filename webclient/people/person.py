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
    def token_mode(self) -> bool:
        """Whether this is token mode's one person (`LOCAL`), whom the pages never name."""
        return self.id == LOCAL.id

    @property
    def label(self) -> str:
        """What a card or a header shows: the name, else the id."""
        return self.name or self.id


SERVER_IDS = "webclient:"
"""The start of the ids the server gives itself: no sign-in of a team (an OpenID subject, a proxy's user name) may
be one (`is_reserved`), so no person of a team is ever the one of token mode."""

LOCAL = Person(id=SERVER_IDS + "token", name="you", admin=True)
"""The one person of token mode (``WEBCLIENT_AUTH=token``): whoever has the token owns everything. Until migration
0004 its id was ``local``, which a proxy could give anyone of a team on the same store."""


def is_reserved(person_id: str) -> bool:
    """Whether ``person_id`` is one the server keeps for itself (token mode's person): a team's sign-in naming it is
    refused."""
    return person_id.startswith(SERVER_IDS)
