"""``{person}`` in an agent's folders (``workspace = "/srv/projects/{person}"``): each person's own folder.

A person's id becomes one path component that is safe and theirs alone: percent-encoded (letters, digits and
``-._~`` stay; every other byte, ``/`` and NUL included, becomes ``%XX``), a leading ``.`` encoded too (so never
``.``, ``..`` or a hidden name), and an id too long for one name cut with a hash after ``+`` (a character the
encoding never leaves bare). Percent-encoding is one-to-one, so two people never share a folder.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import quote

__all__ = ["PERSON", "above_people", "expand", "names_person", "person_folder"]

PERSON = "{person}"
"""What an agent's ``workspace`` or ``extra_roots`` write where each person's own folder name goes."""

MAX_NAME_BYTES = 255
_KEPT = 200
"""Characters of a long id's encoding kept before its hash."""


def person_folder(person_id: str) -> str:
    """The folder name of ``person_id``: one safe path component, different for every id.

    Raises:
        ValueError: an empty id (no one has it).
    """
    if not person_id:
        raise ValueError("a person's id is empty")
    name = quote(person_id.encode("utf-8", "surrogatepass"), safe="-_~.")  # "." kept but where it leads (below)
    if name.startswith("."):
        name = "%2E" + name[1:]
    if len(name.encode()) > MAX_NAME_BYTES:
        cut = name[:_KEPT]
        cut = cut[: cut.rfind("%")] if "%" in cut[-2:] else cut  # never half an escape
        name = f"{cut}+{hashlib.sha256(person_id.encode('utf-8', 'surrogatepass')).hexdigest()[:32]}"
    return name


def names_person(path: Path) -> bool:
    """Whether ``path`` has ``{person}`` in it."""
    return PERSON in str(path)


def expand(path: Path, person_id: str) -> Path:
    """``path`` with every ``{person}`` replaced by ``person_id``'s folder name (each part on its own: the name
    never adds a part)."""
    name = person_folder(person_id)
    return Path(*(part.replace(PERSON, name) for part in path.parts))


def above_people(root: Path) -> Path:
    """``root`` itself, or for a root that names ``{person}`` the folder above the first part that does: the folder
    that holds every person's."""
    for index, part in enumerate(root.parts):
        if PERSON in part:
            return Path(*root.parts[:index])
    return root
