"""What a person may do with a session: own it, drive it, watch it, or nothing (it does not exist for them)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from webclient.people.person import Person

Role = Literal["owner", "drive", "watch"]
ShareKind = Literal["person", "group", "link"]
ShareRole = Literal["drive", "watch"]

_RANK: dict[str, int] = {"watch": 1, "drive": 2, "owner": 3}


@dataclass(frozen=True)
class Share:
    """The owner let ``grantee`` (a person's id, a group's name, or a link's token) ``role`` the session."""

    kind: ShareKind
    grantee: str
    role: ShareRole


def _names(share: Share, person: Person, link: str | None) -> bool:
    if share.kind == "person":
        return share.grantee == person.id
    if share.kind == "group":
        return share.grantee in person.groups
    return link is not None and share.grantee == link


def role_of(person: Person, owner: str | None, shares: Iterable[Share] = (), link: str | None = None) -> Role | None:
    """What ``person`` may do with a session that ``owner`` owns (None: no one, from before people; admins only)
    and that ``shares`` open to others; ``link`` is the share link's token the request came with, if any.

    None means the session is not theirs to see: the web layer answers 404, as if it did not exist.
    """
    if person.admin or (owner is not None and owner == person.id):
        return "owner"
    best: Role | None = None
    for share in shares:
        if _names(share, person, link) and (best is None or _RANK[share.role] > _RANK[best]):
            best = share.role
    return best


def may_drive(role: Role | None) -> bool:
    """Prompt, answer, change modes and settings, Stop: the owner and those it shared the session with to drive."""
    return role in ("owner", "drive")
