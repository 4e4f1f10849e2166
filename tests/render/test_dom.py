"""The page's fixed element ids are spelled once (`webclient.render.dom.PAGE_IDS`): templates take them from there,
and the scripts of ``static/js`` ask for no id that is not one of them."""

from __future__ import annotations

import re
from dataclasses import astuple

from tests.support.servers import ROOT
from webclient.render.dom import PAGE_IDS

SCRIPTS = ROOT / "static" / "js"
TEMPLATES = ROOT / "templates"
ASKED = re.compile(r"""getElementById\(["']([a-z][a-z-]*)["']\)|["'][^"'\n]*#([a-z][a-z-]*)(?![\w-])[^"'\n]*["']""")
SPELLED = re.compile(r"""\b(?:id|for|list|aria-controls)="([a-z][a-z-]*)"|(?:hx-target|href)="#([a-z][a-z-]*)\"""")


def test_every_id_a_script_asks_for_is_a_page_id() -> None:
    ids = set(astuple(PAGE_IDS))
    asked = {
        (script.name, name)
        for script in SCRIPTS.glob("*.js")
        for match in ASKED.finditer(script.read_text())
        for name in match.groups()
        if name
    }
    colours = {"ffffff"}  # embed.js's default accent, a colour
    assert {(script, name) for script, name in asked if name not in ids | colours} == set()


def test_no_template_spells_a_page_id_itself() -> None:
    ids = set(astuple(PAGE_IDS))
    spelled = {
        (template.name, name)
        for template in TEMPLATES.glob("*.html")
        for match in SPELLED.finditer(template.read_text())
        for name in match.groups()
        if name in ids
    }
    assert spelled == set()


def test_page_ids_are_distinct() -> None:
    assert len(set(astuple(PAGE_IDS))) == len(astuple(PAGE_IDS))
