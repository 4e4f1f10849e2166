"""The settings page beside Secrets where a person keeps their own MCP servers (`webclient.store.mcp_servers`): listed
by name, kind and command or URL, added, edited and deleted; a variable's or header's value is never shown again
(blank on the edit form: left blank, it stays as it was). Values may name a secret as ``${secret:NAME}``."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from webclient.session.mcp_servers import KINDS, MAX_ITEMS, MAX_TEXT, McpRefused, McpServer, server
from webclient.web.context import base_context, person, render, urls
from webclient.web.page_context import SignedInContext

if TYPE_CHECKING:  # the store only when the server keeps one
    from webclient.store.mcp_servers import PersonMcpServers

MAX_FIELD = MAX_ITEMS * (MAX_TEXT + 130)
"""Characters of one field of the form (the arguments, the variables, the headers)."""


def mcp_servers_of(request: Request) -> PersonMcpServers | None:
    kept: PersonMcpServers | None = getattr(request.app.state, "mcp_servers", None)
    return kept


async def person_mcp_servers(request: Request) -> list[McpServer]:
    """The servers of the person the request comes from (none without a store)."""
    kept = mcp_servers_of(request)
    return await kept.servers(person(request).id) if kept is not None else []


@dataclass(frozen=True)
class McpForm:
    """The form as typed: what the page shows again after a refusal, or an edited server's (values blank)."""

    name: str = ""
    kind: str = "stdio"
    command: str = ""
    args: str = ""
    env: str = ""
    url: str = ""
    headers: str = ""
    default: bool = True
    replacing: str = ""
    """The name of the server being edited; empty: a new one."""

    @classmethod
    def of(cls, shown: McpServer) -> McpForm:
        """An edit form for ``shown``: its variables and headers by name, their values blank."""
        return cls(
            name=shown.name,
            kind=shown.kind,
            command=shown.command,
            args="\n".join(shown.args),
            env="\n".join(f"{name}=" for name, _ in shown.env),
            url=shown.url,
            headers="\n".join(f"{name}: " for name, _ in shown.headers),
            default=shown.default,
            replacing=shown.name,
        )


@dataclass(frozen=True, kw_only=True)
class McpContext(SignedInContext):
    """``mcp_servers.html``: this person's MCP servers, and the form that adds or edits one."""

    template = "mcp_servers.html"
    servers: list[McpServer]
    """The servers kept, by name (shown by `McpServer.where`: never a variable's or header's value)."""
    form: McpForm
    """The form's fields (an edited server's, or what was typed before a refusal)."""
    kinds: tuple[str, ...]
    """The kinds of server the form offers: stdio, http, sse."""
    refused: str | None
    """Why the last server was not kept, if it was not."""
    saved: str | None
    """The name of the server just kept."""
    stored: bool
    """Whether the server keeps them at all (it needs the store)."""


async def mcp_page(request: Request) -> Response:
    """The person's MCP servers, and the form (``?edit=NAME``: filled with that one's, its values blank)."""
    editing = request.query_params.get("edit", "")[:64]
    mine = await person_mcp_servers(request)
    shown = next((s for s in mine if s.name == editing), None)
    form = McpForm.of(shown) if shown is not None else McpForm()
    return await _page(request, form, saved=request.query_params.get("saved", "")[:64] or None, servers=mine)


async def _page(
    request: Request,
    form: McpForm,
    refused: str | None = None,
    saved: str | None = None,
    servers: list[McpServer] | None = None,
) -> Response:
    servers = servers if servers is not None else await person_mcp_servers(request)
    context = McpContext(
        **base_context(request),
        servers=servers,
        form=form,
        kinds=KINDS,
        refused=refused,
        saved=saved,
        stored=mcp_servers_of(request) is not None,
    )
    return render(request, context, 400 if refused is not None else 200)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _pairs(text: str, separator: str, what: str) -> dict[str, str]:
    """``NAME=value`` (or ``Name: value``) lines as a table; the first separator splits.

    Raises:
        McpRefused: a line without it.
    """
    pairs: dict[str, str] = {}
    for line in _lines(text):
        name, found, value = line.partition(separator)
        if not found:
            raise McpRefused(f"{what}: each line is NAME{separator}value, not {line[:40]!r}")
        pairs[name.strip()] = value.strip()
    return pairs


def _form_server(form: McpForm, before: McpServer | None) -> McpServer:
    """The server the form describes; a variable or header left blank keeps ``before``'s value.

    Raises:
        McpRefused: naming the field at fault.
    """
    if any(len(text) > MAX_FIELD for text in (form.args, form.env, form.headers)):
        raise McpRefused("a field is too long")
    kept_env = dict(before.env) if before is not None else {}
    kept_headers = dict(before.headers) if before is not None else {}
    env = {k: v or kept_env.get(k, "") for k, v in _pairs(form.env, "=", "variables").items()}
    headers = {k: v or kept_headers.get(k, "") for k, v in _pairs(form.headers, ":", "headers").items()}
    empty = [name for name, value in (env | headers).items() if not value]
    if empty:
        raise McpRefused(f"{empty[0][:60]} has no value")
    stdio = form.kind == "stdio"
    return server(
        form.name.strip(),
        form.kind,
        source="person",
        command=form.command if stdio else "",
        args=_lines(form.args) if stdio else (),
        env=env if stdio else {},
        url=form.url if not stdio else "",
        headers=headers if not stdio else {},
        default=form.default,
    )


async def save_mcp_server(request: Request) -> Response:
    """Add a server, or replace the one being edited (``replacing``); the page again, saying which was kept."""
    posted = await request.form()
    typed = {key: value[: MAX_FIELD + 1] for key, value in posted.items() if isinstance(value, str)}
    form = McpForm(
        name=typed.get("name", "")[:200],
        kind=typed.get("kind", "stdio")[:8],
        command=typed.get("command", "")[: MAX_TEXT + 1],
        args=typed.get("args", ""),
        env=typed.get("env", ""),
        url=typed.get("url", "")[: MAX_TEXT + 1],
        headers=typed.get("headers", ""),
        default=typed.get("default") == "yes",
        replacing=typed.get("replacing", "")[:64],
    )
    kept = mcp_servers_of(request)
    if kept is None:
        return await _page(request, form, "MCP servers need the store (WEBCLIENT_STORE): nothing would keep them.")
    mine = await kept.servers(person(request).id)
    before = next((s for s in mine if form.replacing and s.name == form.replacing), None)
    try:
        definition = _form_server(form, before)
        await kept.put(person(request).id, definition, replacing=before.name if before is not None else None)
    except McpRefused as refused:
        shown = replace(form, env=_names_only(form.env, "="), headers=_names_only(form.headers, ":"))
        return await _page(request, shown, str(refused), servers=mine)
    return RedirectResponse(urls(request).for_("mcp_servers", saved=definition.name), status_code=303)


def _names_only(text: str, separator: str) -> str:
    """Typed lines with their values taken out: a refused form never sends a value back."""
    return "\n".join(f"{line.partition(separator)[0].strip()}{separator}" for line in _lines(text))[:MAX_FIELD]


async def delete_mcp_server(request: Request) -> Response:
    posted = await request.form()
    name = posted.get("name")
    kept = mcp_servers_of(request)
    if kept is not None and isinstance(name, str):
        await kept.delete(person(request).id, name[:64])
    return RedirectResponse(urls(request).for_("mcp_servers"), status_code=303)
