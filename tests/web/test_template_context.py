"""Every page's template context is typed and documented (`webclient.web.page_context`, as datasette's
``tests/test_template_context.py``): each field has its docstring, each page's template exists and reads nothing
its context does not hold."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from dataclasses import fields

import pytest
from jinja2 import meta

import webclient.web
from webclient.render.rendering import TEMPLATES_DIR, make_environment
from webclient.web.page_context import BaseContext, SignedInContext


def contexts() -> list[type[BaseContext]]:
    """Every context class of the web layer, its modules imported."""
    for module in pkgutil.walk_packages(webclient.web.__path__, "webclient.web."):
        importlib.import_module(module.name)
    found: list[type[BaseContext]] = []
    todo: list[type[BaseContext]] = [BaseContext]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def pages() -> list[type[BaseContext]]:
    return [cls for cls in contexts() if "template" in cls.__dict__]


def documented(cls: type) -> set[str]:
    """The fields of ``cls``'s own body followed by a docstring."""
    body = ast.parse(inspect.getsource(cls)).body[0]
    assert isinstance(body, ast.ClassDef)
    names = set()
    for statement, following in zip(body.body, body.body[1:], strict=False):
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            if isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant):
                names.add(statement.target.id)
    return names


NOT_READ_FROM_CONTEXT = {
    "rules.html": {"rule_row"},  # its own macro
    "inbox.html": {"p", "call", "q"},  # set in a loop (two at once) or a branch
    "audit.html": {"here"},  # set in either branch
    "session.html": {"current", "entry"},  # set in a branch; the entry a pushed ``entry`` block is given
    "protocol_log.html": {"line"},  # the line its ``line_json`` block is given
}
"""Names `jinja2.meta` takes for the context's that are not: set by the template where meta does not follow, or given
to a block rendered alone."""


def test_there_is_a_context_for_every_page() -> None:
    names = {cls.template for cls in pages()}
    assert names == {
        "index.html",
        "session.html",
        "inbox.html",
        "people.html",
        "rules.html",
        "secrets.html",
        "mcp_servers.html",
        "audit.html",
        "agent_sessions.html",
        "embed.html",
        "signin.html",
        "refused.html",
        "confirm_delete.html",
        "panel_page.html",
        "protocol_log.html",
    }


@pytest.mark.parametrize("cls", contexts(), ids=lambda cls: cls.__name__)
def test_every_field_of_a_context_has_its_docstring(cls: type[BaseContext]) -> None:
    inherited = {f.name for base in cls.__bases__ if base is not object for f in fields(base)}
    own = {f.name for f in fields(cls)} - inherited
    assert cls.__doc__ and cls.__doc__ != cls.__bases__[0].__doc__
    assert own - documented(cls) == set()


@pytest.mark.parametrize("cls", pages(), ids=lambda cls: cls.__name__)
def test_a_page_reads_only_what_its_context_holds(cls: type[BaseContext]) -> None:
    """The page's template and the base layout, not the partials they include (a partial is rendered by fragments
    too, with contexts of their own)."""
    env = make_environment()
    names = {f.name for f in fields(cls)}
    for template in (cls.template, "base.html"):
        source = (TEMPLATES_DIR / template).read_text()
        read = meta.find_undeclared_variables(env.parse(source)) - set(env.globals)
        assert read - names - NOT_READ_FROM_CONTEXT.get(template, set()) == set(), template
    assert cls.template == "signin.html" or issubclass(cls, SignedInContext)  # only the sign-in page has no one
