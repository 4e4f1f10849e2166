"""The Jinja environment and the renderer of pages and fragments: every template sees the helpers registered here.

Autoescape is on everywhere: agent text, titles, paths and JSON reach the page escaped, and the only
markup we trust is what :mod:`webclient.render.markdown` produced (sanitised).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from jinja2_fragments import render_block
from markupsafe import Markup

from webclient.render import diffs, dom, formats
from webclient.render.diff_rows import split_rows
from webclient.render.git_patch import git_patch
from webclient.render.markdown import render_markdown
from webclient.render.terminal import terminal_lines, terminal_screen
from webclient.render.text import mixed_scripts, reveal, reveal_plain, scrub
from webclient.session.uploads import AUDIO_TYPES, IMAGE_TYPES

TEMPLATES_DIR = Path(__file__).resolve().parents[2] / "templates"

KEPT_MARKDOWN_CHARS = 20_000

SUBAGENT_WINDOW = 40
"""The newest entries of a subagent's thread that its card shows: the card is drawn whole at each change inside."""


def markdown_filter(text: str) -> Markup:
    return Markup(render_markdown(text))


@lru_cache(maxsize=256)
def _kept_markdown(text: str) -> Markup:
    return Markup(render_markdown(text))


def kept_markdown_filter(text: str) -> Markup:
    """Markdown of a text drawn again and again unchanged (a subagent's messages: its card is drawn whole at every
    change inside), kept once rendered; a long text is rendered each time rather than held."""
    return _kept_markdown(text) if len(text) <= KEPT_MARKDOWN_CHARS else markdown_filter(text)


class _Environment(Environment):
    """Templates see the globals as one dict, copied when a template loads (so set them all before).

    Jinja chains each template's globals to the environment's; every render then copies that chain key by key,
    about 20 µs for our forty globals, and the live view renders a fragment for nearly every change it sends.
    """

    def make_globals(self, d: MutableMapping[str, Any] | None) -> MutableMapping[str, Any]:
        return {**self.globals, **(d or {})}


def make_environment(templates_dir: Path = TEMPLATES_DIR) -> Environment:
    env = _Environment(
        loader=FileSystemLoader(templates_dir),
        # Never look at a template's file again once loaded: Jinja would stat it (and every template it includes)
        # at each render, and the live view renders a fragment for nearly every change. `--reload` restarts the
        # whole process when a template changes.
        auto_reload=False,
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        dom.GLOBALS,
        kind_label=formats.kind_label,
        kind_class=formats.kind_class,
        status_label=formats.status_label,
        status_class=formats.status_class,
        option_class=formats.option_class,
        operation_label=formats.operation_label,
        git_patch=git_patch,
        split_rows=split_rows,
        plan_status_class=formats.plan_status_class,
        plan_priority_class=formats.plan_priority_class,
        mixed_scripts=mixed_scripts,
        safe_url=formats.safe_url,
        build_diff=diffs.build_diff,
        diff_layout=diffs.diff_layout,
        gap_rows=diffs.gap_rows,
        expand_gap=diffs.expand_gap,
        expand_file=diffs.expand_file,
        terminal_lines=terminal_lines,
        terminal_screen=terminal_screen,
        tokens=formats.tokens,
        notice_label=formats.notice_label,
        compaction_label=formats.compaction_label,
        compaction_class=formats.compaction_class,
        turn_usage=formats.turn_usage,
        file_uri_path=formats.file_uri_path,
        size=formats.size,
        b64=formats.b64,
        SAFE_AUDIO_TYPES=formats.SAFE_AUDIO_TYPES,
        money=formats.money,
        SAFE_IMAGE_TYPES=formats.SAFE_IMAGE_TYPES,
        UPLOAD_IMAGE_TYPES=IMAGE_TYPES,
        UPLOAD_AUDIO_TYPES=AUDIO_TYPES,
        SUBAGENT_WINDOW=SUBAGENT_WINDOW,
    )
    env.filters.update(
        markdown=markdown_filter,
        kept_markdown=kept_markdown_filter,
        pretty_json=formats.pretty_json,
        visible=reveal,
        visible_text=reveal_plain,
        tab_title=formats.tab_title,
        urlencode=formats.urlencode,
    )
    return env


@cache
def shared_environment() -> Environment:
    """The environment of ``templates/``, one per process: its templates are compiled once, not again for each app
    of the process (the tests make hundreds; it cost a CPU-second each on a busy machine). Nothing of an app is
    in it, and it never looks at a template's file again (``auto_reload=False``)."""
    return make_environment()


class Renderer:
    """Renders pages and fragments of the shared templates; one per application."""

    def __init__(self, env: Environment | None = None) -> None:
        self.env = env or shared_environment()

    def warm(self) -> None:
        """Compile every template now (about 0.1 s), so that the first page after a start does not wait for it."""
        for name in self.env.list_templates(extensions=["html"]):
            self.env.get_template(name)

    def page(self, template: str, **context: Any) -> str:
        return scrub(self.env.get_template(template).render(**context))

    def block(self, template: str, block: str, **context: Any) -> str:
        return scrub(render_block(self.env, template, block, **context))
