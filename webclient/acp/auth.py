"""The agent's ``authMethods`` (``initialize`` answer) as sign-in methods a person can follow.

Spec: https://agentclientprotocol.com/protocol/initialization#authentication. Types:

* ``agent`` (or no type): the client calls ``authenticate {methodId}``: a button.
* ``terminal``: the client runs the agent's own command with ``args`` appended and ``env`` added, in a terminal
  (the page's sign-in terminal, `webclient.session.terminal_auth`), then starts the agent again;
  ``authenticate`` is never called for it. Offered by agents only when the client advertises
  ``clientCapabilities.auth.terminal`` (`webclient.acp.connection.BASE_CAPABILITIES`).
* ``env_var`` (``vars: [{name, label?, secret?, optional?}]``, removed from the spec but still sent by some
  agents: codex-acp, dirac, glm): the client calls ``authenticate`` once the variables are set (the server's
  environment, or the person's secrets); until then the page asks for them, keeps them as the person's secrets and
  starts the agent again with them.
* anything else: shown as instructions (name and description), never as a button.

An ``agent`` method whose description or ``_meta`` names an environment variable (gemini-cli's "Use Gemini
API key": "Requires setting the `GEMINI_API_KEY` environment variable") shows that variable too. One marked
``_meta["api-key"]`` (``{provider}``, gemini-cli's) is an API key's, taken like an ``env_var`` method: its
variable is the one it names, else its provider's (`PROVIDER_KEYS`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, cast

from webclient.acp import wire, wire_v2
from webclient.acp.wire_values import items, mapping, name, strings
from webclient.session.agent_auth import AuthMethod, EnvVar

__all__ = ["PROVIDER_KEYS", "sign_in_method", "sign_in_methods"]

# An environment variable's name as agents write it: upper case with at least one underscore (API_KEY).
_ENV_NAME = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
# Words that say a name in a description is an environment variable.
_ENV_WORDS = re.compile(r"environment|env var|variable|export ", re.IGNORECASE)


PROVIDER_KEYS = {
    "gemini": "GEMINI_API_KEY",
    "google": "GEMINI_API_KEY",
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}
"""The variable of an ``_meta["api-key"].provider`` that names none; another provider's is ``PROVIDER_API_KEY``."""


WireAuthMethod = wire.AuthMethod | wire_v2.V2AuthMethod
"""An ``authMethods`` item as the spec has it; the ``env_var`` type the spec dropped is read by its keys."""


def _declared_vars(raw: WireAuthMethod) -> list[EnvVar]:
    """``vars`` of an ``env_var`` method (the older single ``varName`` too)."""
    found = []
    for item in items(raw.get("vars")):
        var = mapping(item)
        var_name = name(var.get("name"))
        if var_name is not None:
            found.append(
                EnvVar(
                    name=var_name,
                    label=name(var.get("label")),
                    secret=var.get("secret") is not False,
                    optional=var.get("optional") is True,
                )
            )
    var_name = name(raw.get("varName"))
    if not found and var_name is not None:
        found.append(EnvVar(name=var_name))
    return found


def _named_vars(description: str | None, meta: object) -> list[EnvVar]:
    """Variables an ``agent`` method names in its description (when it speaks of the environment) or ``_meta``."""
    names: list[str] = []
    if description and _ENV_WORDS.search(description):
        names += _ENV_NAME.findall(description)
    if isinstance(meta, Mapping):
        for key, value in meta.items():
            if "env" not in str(key).lower():
                continue
            values = value if isinstance(value, list) else [value]
            for item in values:
                item = item.get("name") if isinstance(item, Mapping) else item
                if isinstance(item, str) and _ENV_NAME.fullmatch(item):
                    names.append(item)
    return [EnvVar(name=name) for name in dict.fromkeys(names)]


def sign_in_method(raw: Any) -> AuthMethod | None:
    """One ``AuthMethod`` (its id is ``id`` in v1, ``methodId`` in v2), or None when it has no id."""
    if not isinstance(raw, dict):
        return None
    method = cast(WireAuthMethod, raw)
    method_id = name(method.get("methodId")) or name(method.get("id"))
    if method_id is None:
        return None
    kind = name(method.get("type")) or "agent"
    description = name(method.get("description"))
    meta = method.get("_meta")
    env_vars = _declared_vars(method) if kind == "env_var" else _named_vars(description, meta)
    marked = meta.get("api-key") if isinstance(meta, Mapping) else None
    api_key = kind == "agent" and isinstance(marked, Mapping)
    if isinstance(marked, Mapping) and api_key and not env_vars:
        provider = name(marked.get("provider")) or "api"
        var = PROVIDER_KEYS.get(provider.lower()) or re.sub(r"[^A-Z0-9]+", "_", provider.upper()) + "_API_KEY"
        env_vars = [EnvVar(name=var if _ENV_NAME.fullmatch(var) else "API_KEY", label="API key")]
    env = method.get("env")  # v1's {name: value}; v2's list of {name, value} is not read
    return AuthMethod(
        id=method_id,
        name=name(method.get("name")) or method_id,
        type=kind,
        description=description,
        env_vars=tuple(env_vars),
        args=tuple(strings(method.get("args"))),
        env=tuple((k, v) for k, v in env.items() if isinstance(v, str)) if isinstance(env, dict) else (),
        link=name(method.get("link")),
        api_key=api_key,
    )


def sign_in_methods(raw: Any) -> list[AuthMethod]:
    """The ``authMethods`` array, in the agent's order; malformed items are skipped."""
    return [m for m in map(sign_in_method, items(raw)) if m is not None]
