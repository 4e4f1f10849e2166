"""The MCP servers a session's agent is given: the catalogue's (the config file's ``mcp_servers``), the person's own
(their settings page), as New session picked them; what the journal keeps of them; their secrets filled in.

Values (an ``env`` value, a header's value, an argument, a URL) may name one of the person's secrets as
``${secret:NAME}``: it is filled in only when the agent's session opens (`resolved`), and what is kept or shown
(`McpServer.public`) holds names, kinds, commands and URLs, never a value. A stdio server is started by the agent, as
its child: inside the agent's sandbox, with the agent's network rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

McpKind = Literal["stdio", "http", "sse"]
KINDS: tuple[str, ...] = get_args(McpKind)
McpSource = Literal["agent", "person"]
"""Where a server is defined: the agent's catalogue entry (for everyone), or the person's own list."""

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
"""A server's name: what the agent calls it (tools come as ``NAME__tool`` in most agents)."""
VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
HEADER = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}")
SECRET_REF = re.compile(r"\$\{secret:([A-Za-z_][A-Za-z0-9_]{0,127})\}")

MAX_SERVERS = 16
"""Servers one agent entry, or one person, may define (and so, twice that for a session)."""
MAX_ITEMS = 64
"""Arguments, variables or headers of one server."""
MAX_TEXT = 4000
"""Characters of one command, argument, value or URL."""


class McpRefused(ValueError):
    """A server definition that cannot be used; the message names the field, for the page or the config file."""


@dataclass(frozen=True, slots=True)
class McpServer:
    """One MCP server as defined (secret references not yet filled in)."""

    name: str
    kind: McpKind = "stdio"
    source: McpSource = "agent"
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    url: str = ""
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    default: bool = True
    """Whether New session picks it unless the person unticks it (the catalogue's always are)."""
    defined: bool = True
    """False: read back from the journal, its definition no longer found (the agent is not given it)."""

    @property
    def key(self) -> str:
        """How New session's checkbox names it: its source and name."""
        return f"{self.source}:{self.name}"

    @property
    def where(self) -> str:
        """Its command line or its URL (without credentials or query), as the header shows it."""
        if self.kind == "stdio":
            return " ".join([self.command, *(a if not SECRET_REF.search(a) else "…" for a in self.args)])[:300]
        return shown_url(self.url)

    def public(self) -> dict[str, Any]:
        """What the journal and the page keep of it: no value of a variable, header or argument."""
        kept: dict[str, Any] = {"name": self.name, "kind": self.kind, "source": self.source}
        if self.kind == "stdio":
            kept |= {"command": self.command, "env": [name for name, _ in self.env]}
        else:
            kept |= {"url": shown_url(self.url), "headers": [name for name, _ in self.headers]}
        return kept


def shown_url(url: str) -> str:
    """``url`` without user, password, query or fragment: what may be shown and journalled."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def from_public(kept: Mapping[str, Any]) -> McpServer:
    """A server as the journal kept it: its values blank (`McpServers.refill` puts its definition back).

    Raises:
        KeyError, ValueError: a record this code cannot read.
    """
    kind = str(kept["kind"])
    if kind not in KINDS:
        raise ValueError(kind)
    source: McpSource = "person" if kept.get("source") == "person" else "agent"
    return McpServer(
        name=str(kept["name"]),
        kind=kind,  # type: ignore[arg-type]  # checked above
        source=source,
        command=str(kept.get("command", "")),
        env=tuple((str(name), "") for name in kept.get("env", [])),
        url=str(kept.get("url", "")),
        headers=tuple((str(name), "") for name in kept.get("headers", [])),
        defined=False,
    )


def server(
    name: str,
    kind: str,
    *,
    source: McpSource,
    command: str = "",
    args: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
    url: str = "",
    headers: Mapping[str, str] | None = None,
    default: bool = True,
) -> McpServer:
    """A server definition checked and bounded (the config file's, or one a person gave).

    Raises:
        McpRefused: naming the field at fault.
    """
    if not NAME.fullmatch(name):
        raise McpRefused("name: letters, digits, '.', '_' and '-', at most 64, e.g. everything")
    if kind not in KINDS:
        raise McpRefused(f"type: {kind!r} is not one of {', '.join(KINDS)}")
    args, env, headers = list(args), dict(env or {}), dict(headers or {})
    for label, many in (("args", args), ("env", env), ("headers", headers)):
        if len(many) > MAX_ITEMS:
            raise McpRefused(f"{label}: at most {MAX_ITEMS}")
    texts = [command, url, *args, *env.values(), *headers.values()]
    if any(len(text) > MAX_TEXT or "\0" in text for text in texts):
        raise McpRefused(f"a command, argument, value or URL is text of at most {MAX_TEXT:,} characters")
    if kind == "stdio":
        if not command.strip():
            raise McpRefused("command: missing, the program that serves MCP on stdio (arguments go in args)")
        if url or headers:
            raise McpRefused('url and headers are for type = "http" or "sse" servers')
        if bad := [key for key in env if not VARIABLE.fullmatch(key)]:
            raise McpRefused(f"env: {bad[0][:60]!r} is not a variable's name")
    else:
        if not url.lower().startswith(("http://", "https://")) or not urlsplit(url).hostname:
            raise McpRefused("url: missing or not an http(s):// URL")
        if command or args or env:
            raise McpRefused("command, args and env are for stdio servers")
        if bad := [key for key in headers if not HEADER.fullmatch(key)]:
            raise McpRefused(f"headers: {bad[0][:60]!r} is not a header's name")
    return McpServer(
        name=name,
        kind=kind,  # type: ignore[arg-type]  # checked above
        source=source,
        command=command.strip(),
        args=tuple(args),
        env=tuple(env.items()),
        url=url.strip(),
        headers=tuple(headers.items()),
        default=default,
    )


class MissingSecret(LookupError):
    """A value names a secret the person does not have (the message names it)."""


def resolved(definition: McpServer, secrets: Mapping[str, str]) -> tuple[McpServer, set[str]]:
    """``definition`` with each ``${secret:NAME}`` filled in from ``secrets``, and the values filled in (which the
    journal's copy of the request must not hold).

    Raises:
        MissingSecret: naming the first secret the person does not have.
    """
    used: set[str] = set()

    def fill(text: str) -> str:
        def one(match: re.Match[str]) -> str:
            value = secrets.get(match.group(1))
            if value is None:
                raise MissingSecret(f"the secret {match.group(1)} is not set")
            used.add(value)
            return value

        return SECRET_REF.sub(one, text)

    filled = replace(
        definition,
        url=fill(definition.url),
        args=tuple(fill(arg) for arg in definition.args),
        env=tuple((name, fill(value)) for name, value in definition.env),
        headers=tuple((name, fill(value)) for name, value in definition.headers),
    )
    return filled, used


@dataclass
class McpServers:
    """A session's MCP servers: those it was given, and which of them its agent was last not given, and why."""

    servers: list[McpServer] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)
    """By server name: why the agent's last session/new, load or resume did not carry it."""
    complete: bool = True
    """False for servers read back from the journal until their definitions are found again (`refill`)."""

    def public(self) -> dict[str, Any]:
        """The ``mcp_servers`` action's arguments: the servers as `McpServer.public` keeps them, and the left out."""
        return {"servers": [s.public() for s in self.servers], "left_out": dict(self.left_out)}

    def replayed(self, action: Mapping[str, Any]) -> None:
        """The journal's ``mcp_servers`` action again: the list as it was, values blank until `refill`."""
        self.servers = [from_public(kept) for kept in action.get("servers", [])]
        self.left_out = {str(k): str(v) for k, v in dict(action.get("left_out") or {}).items()}
        self.complete = not self.servers

    def refill(self, definitions: Iterable[McpServer]) -> None:
        """Put back the definitions of servers read from the journal (the catalogue's and the person's, as they are
        now); one no longer defined stays listed, and is left out of the agent's sessions (`McpServer.defined`)."""
        found = {definition.key: definition for definition in definitions}
        servers: list[McpServer] = []
        for kept in self.servers:
            definition = found.get(kept.key)
            found_again = definition is not None and definition.kind == kept.kind
            servers.append(definition if definition is not None and found_again else kept)
        self.servers, self.complete = servers, True


def pick(offered: Iterable[McpServer], picked: Iterable[str] | None) -> list[McpServer]:
    """Of the servers ``offered`` to a new session, those ``picked`` by key (None: the defaults), at most
    ``2 * MAX_SERVERS``; one name once (the catalogue's first)."""
    chosen = set(picked) if picked is not None else None
    servers: list[McpServer] = []
    names: set[str] = set()
    for offer in offered:
        wanted = offer.default if chosen is None else offer.key in chosen
        if wanted and offer.name not in names and len(servers) < 2 * MAX_SERVERS:
            servers.append(offer)
            names.add(offer.name)
    return servers
