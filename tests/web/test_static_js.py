"""The page's scripts: every one a template loads exists (or is a bundle of them), every behaviour file is loaded, and
none builds a URL (URLs come from the templates' attributes: ``hx-*``, ``data-url``); no template asks htmx to
evaluate script."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.servers import ROOT
from webclient.web.delivery.bundles import BUNDLES

TEMPLATES = ROOT / "templates"
STATIC = ROOT / "static"
SCRIPT = re.compile(r"""<script\b[^>]*\bsrc="\{\{ static\('([^']+)'\) \}\}\"""")
COMMENT = re.compile(r"(?:^|\s)//.*$", re.MULTILINE)
URL_PATH = re.compile(r"""["'`](?:https?:/)?/[A-Za-z{$]|\}/[A-Za-z]|/sessions\b""")
"""A string that starts with a path (``"/x``, ``'http://x``), a path after a template literal's ``${...}``, or
``/sessions`` anywhere."""


def loaded_scripts() -> set[str]:
    """Every script path (under ``static/``) a template loads, and the modules of the bundles among them."""
    named = {path for template in TEMPLATES.glob("*.html") for path in SCRIPT.findall(template.read_text())}
    return named | {member for path in named for member in BUNDLES.get(path, ())}


def behaviour_files() -> list[Path]:
    return sorted((STATIC / "js").glob("*.js"))


def test_every_script_a_template_loads_exists() -> None:
    scripts = loaded_scripts()
    assert {"vendor/htmx.min.js", "vendor/ws.min.js", "js/session-page.js", "js/socket-status.js"} <= scripts
    assert sorted(path for path in scripts if not (STATIC / path).is_file() and path not in BUNDLES) == []
    assert sorted(path for path in BUNDLES if (STATIC / path).exists()) == []  # a bundle is no file


def test_every_behaviour_file_is_loaded_and_imports_only_files_that_exist() -> None:
    files = behaviour_files()
    assert len(files) > 10
    assert sorted(f"js/{file.name}" for file in files if f"js/{file.name}" not in loaded_scripts()) == []
    for file in files:
        for imported in re.findall(r"""^import .* from "(\./[\w-]+\.js)";$""", file.read_text(), re.MULTILINE):
            assert (file.parent / imported).is_file(), f"{file.name} imports {imported}"


def test_no_script_builds_a_url() -> None:
    for file in behaviour_files():
        code = COMMENT.sub("", file.read_text())
        assert URL_PATH.findall(code) == [], f"{file.name} spells a URL: take it from an attribute the template renders"


def test_the_url_check_catches_what_composer_js_once_did() -> None:
    for spelled in ['.replace(/\\/prompt$/, "/mentions")', "fetch('/sessions/' + id)", "`${root}/x`", '"http://x/"']:
        assert URL_PATH.findall(COMMENT.sub("", spelled)), spelled
    for fine in ['"/" + command', '"diff_mode=" + mode + "; path=/"', "// see /sessions/{id}/log", 'import "./a.js"']:
        assert URL_PATH.findall(COMMENT.sub("", fine)) == [], fine


EVALUATED = re.compile(r"""hx-trigger=["'][^"']*\[|\bhx-on[:-]|\bhx-vars=|\bhx-vals=["']\s*(?:js|javascript):""")
"""What htmx runs through ``eval`` (a trigger's ``[filter]``, ``hx-on``, ``hx-vars``, ``js:`` values), which the
page's policy (``script-src 'self'``) forbids: it fails without a word, and a filter then lets every event through."""


def test_no_template_asks_htmx_to_evaluate_script() -> None:
    found = {
        f"{template.name}: {match.group(0)}"
        for template in TEMPLATES.glob("*.html")
        for match in EVALUATED.finditer(template.read_text())
    }
    assert not found, found
    assert EVALUATED.search("""<div hx-trigger="keyup[key=='Enter']">""")  # the pattern catches what it is for


def test_every_link_into_the_side_panel_swaps_its_inside() -> None:
    """The Changes list and a file's review reload themselves whole (``hx-swap="outerHTML"``), and htmx gives that to
    the links inside them: "← Changes" then replaced the side panel's body itself, and the next link found no
    target. Each link into the panel says ``innerHTML``."""
    tags = re.compile(r"<a\b[^>]*hx-target=\"#\{\{ page_ids\.side_panel_body \}\}\"[^>]*>")
    found = [
        (template.name, tag) for template in TEMPLATES.glob("*.html") for tag in tags.findall(template.read_text())
    ]
    assert len(found) >= 6
    assert [(name, tag) for name, tag in found if 'hx-swap="innerHTML"' not in tag] == []
