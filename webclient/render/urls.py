"""Every URL of the app, built from one table of named routes under the path prefix the app is served at.

The web layer makes its routes from :data:`ROUTES`, so a name and its path cannot drift apart; templates, Python
and the ``data-*-url`` attributes the page's scripts read build every URL through :class:`Urls`. Behind a reverse
proxy that mounts the app under a prefix (``location /agents/`` with ``WEBCLIENT_ROOT_PATH=/agents`` or the proxy's
``X-Forwarded-Prefix``, see ``webclient.web.access.root_path`` and ``docs/deployment.md``) the prefix arrives as the
ASGI ``root_path``, and every URL carries it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import quote, urlencode

from webclient.render.text import scrub

ROUTES: dict[str, str] = {
    "index": "/",
    "new_session": "/sessions",
    "agent_sessions": "/agents/{agent}/sessions",
    "rules": "/settings/rules",
    "delete_rule": "/settings/rules/delete",
    "inbox": "/inbox",
    "always_allow": "/sessions/{session_id}/always",
    "inbox_answer": "/sessions/{session_id}/inbox-answer",
    "session": "/sessions/{session_id}",
    "prompt": "/sessions/{session_id}/prompt",
    "end_session": "/sessions/{session_id}/end",
    "archive_session": "/sessions/{session_id}/archive",
    "confirm_delete": "/sessions/{session_id}/delete",
    "delete_session": "/sessions/{session_id}/delete",
    "export": "/sessions/{session_id}/export.md",
    "protocol_log": "/sessions/{session_id}/log",
    "file": "/sessions/{session_id}/file",
    "changes": "/sessions/{session_id}/changes",
    "attachments": "/sessions/{session_id}/attachments",
    "mentions": "/sessions/{session_id}/mentions",
    "change_diff": "/sessions/{session_id}/changes/diff",
    "worktree": "/sessions/{session_id}/worktree",
    "worktree_commit": "/sessions/{session_id}/worktree/commit",
    "worktree_discard": "/sessions/{session_id}/worktree/discard",
    "diff_body": "/sessions/{session_id}/diffs/{seq:int}/{index:int}",
    "resource": "/sessions/{session_id}/resources/{seq:int}/{index:int}",
    "tool_call_raw": "/sessions/{session_id}/entries/{seq:int}/raw",
    "checkpoint": "/sessions/{session_id}/checkpoints/{seq:int}",
    "socket": "/sessions/{session_id}/ws",
    "sign_in_terminal": "/sessions/{session_id}/sign-in-terminal",
    "sign_out": "/signout",
    "people": "/admin/people",
    "revoke_signin": "/admin/signins/{signin_id}/revoke",
    "secrets": "/settings/secrets",
    "save_secret": "/settings/secrets",
    "delete_secret": "/settings/secrets/delete",
    "mcp_servers": "/settings/mcp",
    "save_mcp_server": "/settings/mcp",
    "delete_mcp_server": "/settings/mcp/delete",
    "session_audit": "/sessions/{session_id}/audit",
    "add_share": "/sessions/{session_id}/shares",
    "revoke_share": "/sessions/{session_id}/shares/{share_id:int}/revoke",
    "audit": "/audit",
    "embed": "/embed",
    "embed_session": "/embed/sessions/{session_id}",
    "embed_end": "/embed/sessions/{session_id}/end",
    "static": "/static",
    "healthz": "/healthz",
    "readyz": "/readyz",
}
"""Route name → path pattern, in Starlette's syntax (``{name}``, or ``{name:int}`` for a number)."""

SIGN_IN_PATH = "/signin"
"""The sign-in page: answered by the access guard before routing (``web.access.guard``), so not a route."""
OIDC_START_PATH = SIGN_IN_PATH + "/oidc"
"""Off to the OpenID provider (``WEBCLIENT_AUTH=oidc``): answered by the guard too (`web.access.signin_flow`)."""
OIDC_CALLBACK_PATH = OIDC_START_PATH + "/callback"
"""Back from the provider, signed in: the redirect URI to register with it."""

VERSION_PARAM = "v"
"""The query parameter a static file's URL names its version in (``/static/app.css?v=HASH``)."""

_PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")


class Urls:
    """The app's URLs under ``root``, the path prefix it is served at (``""`` at the top of its host), and the static
    files' under their versions (``versions``: file → the hash of its content, `webclient.web.delivery.assets`)."""

    def __init__(self, root: str = "", versions: Mapping[str, str] | None = None) -> None:
        self.root = root.rstrip("/")
        self.versions: Mapping[str, str] = versions or {}

    def for_(self, name: str, /, **params: object) -> str:
        """The route ``name`` with its path parameters filled in; the other parameters (but None) make the query.

        ``urls.for_("file", session_id="ab12", path="a b.py", line=3)`` → ``/sessions/ab12/file?path=a+b.py&line=3``
        """
        query = {key: value for key, value in params.items() if value is not None}

        def fill(match: re.Match[str]) -> str:
            key = match.group(1)
            if key not in query:
                raise KeyError(f"the URL of {name!r} needs {key!r}; given: {sorted(params)}")
            return quote(scrub(str(query.pop(key))), safe="")

        path = self.root + _PARAM.sub(fill, ROUTES[name])
        # Agent text may hold lone surrogates (valid JSON, not UTF-8): they become U+FFFD, not an error.
        return f"{path}?{urlencode({key: scrub(str(value)) for key, value in query.items()})}" if query else path

    def static(self, path: str) -> str:
        """A file of ``static/``, by the hash of its content when it has one: every template's static URL comes from
        here, so a page names the exact bytes it was made with, and the browser keeps them a year."""
        version = self.versions.get(path)
        url = f"{self.root}{ROUTES['static']}/{path}"
        return f"{url}?{VERSION_PARAM}={version}" if version else url

    def sign_in(self) -> str:
        return self.root + SIGN_IN_PATH
