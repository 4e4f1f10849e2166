"""``{person}``: a person's id becomes one safe folder name, different for every id, whatever the id holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from webclient.session.person_folders import above_people, expand, person_folder

HOSTILE = [
    "alice",
    "Alice",
    "..",
    ".",
    "../bob",
    "bob/../alice",
    "/etc",
    "a/b",
    "a%2Fb",
    "a_b",
    "%2E%2E",
    ".hidden",
    "x\0y",
    "é",
    "e\u0301",
    "\udcff",
    "a" * 300,
    "a" * 300 + "b",
    "%" * 100,
    "+",
    "a+b",
    "~",
    " ",
    "\n",
]


@pytest.mark.parametrize("person_id", HOSTILE)
def test_an_id_becomes_one_safe_name(person_id: str) -> None:
    name = person_folder(person_id)
    assert "/" not in name and "\0" not in name and name not in ("", ".", "..") and not name.startswith(".")
    assert len(name.encode()) <= 255
    assert expand(Path("/srv/projects/{person}/work"), person_id) == Path("/srv/projects", name, "work")


def test_two_ids_never_share_a_folder() -> None:
    names = [person_folder(person_id) for person_id in HOSTILE]
    assert len(set(names)) == len(HOSTILE), names


def test_an_empty_id_has_no_folder() -> None:
    with pytest.raises(ValueError):
        person_folder("")


def test_the_folder_above_everyones() -> None:
    assert above_people(Path("/srv/projects/{person}/work")) == Path("/srv/projects")
    assert above_people(Path("/srv/p-{person}")) == Path("/srv")
    assert above_people(Path("/srv/shared")) == Path("/srv/shared")
