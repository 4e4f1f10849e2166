"""One table, `Settings`: read once from the environment (``WEBCLIENT_*``), which the command line writes too."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast, get_args

from webclient.path_prefix import path_prefix
from webclient.proxy_proof import ProxyProof
from webclient.workspace.paths import FileAccess
from webclient.workspace.sandbox import SandboxMode

Auth = Literal["token", "oidc", "trusted-header"]


def _bool(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


ACP_PROTOCOLS = (1, 2)
"""The ACP versions a client may offer (``WEBCLIENT_ACP_PROTOCOL``, an agent's ``acp_protocol``)."""


def acp_protocol(value: object, name: str) -> int:
    """An ACP version to offer: 1 or 2 (a string from the environment, an integer from the config file)."""
    text = str(value).strip().lower().removeprefix("v") if not isinstance(value, bool) else ""
    if text not in {str(version) for version in ACP_PROTOCOLS}:
        raise ValueError(f"{name} must be 1 or 2 (the ACP v2 draft), not {value!r}")
    return int(text)


def _positive(env: Mapping[str, str], name: str, default: str) -> float:
    try:
        value = float(env.get(name) or default)
    except ValueError:
        raise ValueError(f"{name} must be a number, not {env.get(name)!r}") from None
    if not value > 0:
        raise ValueError(f"{name} must be more than 0, not {env.get(name)!r}")
    return value


def _not_negative(env: Mapping[str, str], name: str, default: str = "0") -> float:
    """A limit: a number of 0 or more (0: no limit; not set: ``default``)."""
    try:
        value = float(env.get(name) or default)
    except ValueError:
        raise ValueError(f"{name} must be a number, not {env.get(name)!r}") from None
    if not value >= 0:
        raise ValueError(f"{name} must be 0 (no limit) or more, not {env.get(name)!r}")
    return value


@dataclass(frozen=True)
class Settings:
    """Everything configurable, with its environment variable in the help text."""

    agent: str | None = field(
        default=None, metadata={"help": "WEBCLIENT_AGENT: agent command line; default: the demo agent"}
    )
    aap_agent: str | None = field(
        default=None, metadata={"help": "WEBCLIENT_AAP_AGENT: which agent of the AAP server --agent names (if several)"}
    )
    aap_key: str | None = field(  # a secret: no repr
        default=None, repr=False, metadata={"help": "WEBCLIENT_AAP_KEY: the API key for that AAP server (never shown)"}
    )
    # An AAP server is as untrusted as an agent: what it may send (README, "Settings").
    aap_event_mb: float = field(default=8.0, metadata={"help": "WEBCLIENT_AAP_EVENT_MB: one event or answer (MiB)"})
    aap_turn_mb: float = field(default=64.0, metadata={"help": "WEBCLIENT_AAP_TURN_MB: one turn's stream (MiB)"})
    aap_turn_minutes: float = field(default=60.0, metadata={"help": "WEBCLIENT_AAP_TURN_MINUTES: one turn's stream"})
    aap_idle_seconds: float = field(default=300.0, metadata={"help": "WEBCLIENT_AAP_IDLE_SECONDS: a quiet stream"})
    demo_remote: bool = field(
        default=True,
        metadata={"help": "WEBCLIENT_DEMO_REMOTE: also offer the built-in remote demo agent (AAP): on or off"},
    )
    config: Path | None = field(
        default=None,
        metadata={"help": "WEBCLIENT_CONFIG: a TOML file listing the agents offered (see agents.example.toml)"},
    )
    registry: Path | None = field(
        default=None,
        metadata={"help": "WEBCLIENT_REGISTRY: an ACP registry.json; its agents found on PATH are offered"},
    )
    workspace: Path | None = field(
        default=None,
        metadata={"help": "WEBCLIENT_WORKSPACE: the agent's working directory; demo default: a fresh sample"},
    )
    host: str = field(default="127.0.0.1", metadata={"help": "WEBCLIENT_HOST: address to listen on"})
    port: int = field(default=8000, metadata={"help": "WEBCLIENT_PORT (or PORT): port to listen on"})
    reload: bool = field(default=False, metadata={"help": "WEBCLIENT_RELOAD: restart on code changes (development)"})
    allowed_origins: tuple[str, ...] = field(
        default=(),
        metadata={
            "help": "WEBCLIENT_ALLOWED_ORIGINS: extra origins (scheme://host[:port], comma-separated) whose pages may "
            "change things and open the web socket"
        },
    )
    token: str | None = field(
        default=None,
        repr=False,
        metadata={"help": "WEBCLIENT_TOKEN: the sign-in token; default: a random one kept in the data folder"},
    )
    no_token: bool = field(
        default=False,
        metadata={"help": "WEBCLIENT_NO_TOKEN: turn sign-in off (refused unless the server listens on loopback only)"},
    )
    auth: Auth = field(
        default="token",
        metadata={
            "help": "WEBCLIENT_AUTH: how people sign in: token (one person), oidc (the company's OpenID provider) or "
            "trusted-header (a proxy in front names them)"
        },
    )
    trusted_header: str = field(
        default="X-Forwarded-User",
        metadata={"help": "WEBCLIENT_TRUSTED_HEADER: the header a trusted proxy names the person in (trusted-header)"},
    )
    trusted_email_header: str | None = field(
        default=None, metadata={"help": "WEBCLIENT_TRUSTED_EMAIL_HEADER: the header with the person's email, if any"}
    )
    trusted_groups_header: str | None = field(
        default=None,
        metadata={"help": "WEBCLIENT_TRUSTED_GROUPS_HEADER: the header with the person's groups (comma-separated)"},
    )
    trusted_proxies: tuple[str, ...] = field(
        default=(),
        metadata={
            "help": "WEBCLIENT_TRUSTED_PROXIES: addresses or networks (comma-separated) whose trusted header is "
            "believed; from anywhere else it is ignored"
        },
    )
    proxy_proof: ProxyProof = field(default_factory=ProxyProof, metadata={"help": "WEBCLIENT_UDS etc.: proxy_proof"})
    admin_group: str = field(
        default="admins", metadata={"help": "WEBCLIENT_ADMIN_GROUP: members of this group are admins (see all)"}
    )
    oidc_issuer: str | None = field(
        default=None, metadata={"help": "WEBCLIENT_OIDC_ISSUER: the OpenID provider's issuer URL (oidc)"}
    )
    oidc_client_id: str | None = field(default=None, metadata={"help": "WEBCLIENT_OIDC_CLIENT_ID: this client's id"})
    oidc_client_secret: str | None = field(
        default=None, repr=False, metadata={"help": "WEBCLIENT_OIDC_CLIENT_SECRET: this client's secret (if any)"}
    )
    oidc_scopes: str = field(
        default="openid profile email",
        metadata={"help": "WEBCLIENT_OIDC_SCOPES: the scopes asked for (space-separated)"},
    )
    oidc_groups_claim: str = field(
        default="groups", metadata={"help": "WEBCLIENT_OIDC_GROUPS_CLAIM: the claim that lists a person's groups"}
    )
    signin_days: float = field(
        default=14.0, metadata={"help": "WEBCLIENT_SIGNIN_DAYS: how long a sign-in lasts without being used again"}
    )
    secret_key: str | None = field(
        default=None,
        repr=False,
        metadata={
            "help": "WEBCLIENT_SECRET_KEY: the key people's stored secrets are encrypted with; default: a key file "
            "made in the data folder"
        },
    )
    max_sessions_per_person: int = field(
        default=0,
        metadata={"help": "WEBCLIENT_MAX_SESSIONS_PER_PERSON: live sessions one person may have; 0: no limit"},
    )
    max_agents_per_person: int = field(
        default=0,
        metadata={"help": "WEBCLIENT_MAX_AGENTS_PER_PERSON: agents one person may have running; 0: no limit"},
    )
    max_prompt_mb: float = field(
        default=1.0, metadata={"help": "WEBCLIENT_MAX_PROMPT_MB: a prompt's text, at most (MiB); 0: no limit"}
    )
    max_queued_prompts: int = field(
        default=20, metadata={"help": "WEBCLIENT_MAX_QUEUED_PROMPTS: prompts a session queues at most; 0: no limit"}
    )
    max_queue_mb: float = field(
        default=16.0,
        metadata={"help": "WEBCLIENT_MAX_QUEUE_MB: what a session's queued prompts hold, attachments too (MiB)"},
    )
    allowed_hosts: tuple[str, ...] = field(
        default=(),
        metadata={
            "help": "WEBCLIENT_ALLOWED_HOSTS: host names the server answers to besides loopback names and the listen "
            "address (comma-separated)"
        },
    )
    file_access: FileAccess = field(
        default="read-write",
        metadata={"help": "WEBCLIENT_FILE_ACCESS: the agent's file access: read-write, read-only or none"},
    )
    terminals: bool = field(
        default=True, metadata={"help": "WEBCLIENT_TERMINALS: let the agent run commands (terminal/*): on or off"}
    )
    extra_roots: tuple[Path, ...] = field(
        default=(),
        metadata={
            "help": "WEBCLIENT_EXTRA_ROOTS: more directories the agent may use, besides its workspace (: separated)"
        },
    )
    start_timeout: float = field(
        default=120.0,
        metadata={"help": "WEBCLIENT_START_TIMEOUT: seconds an agent has to answer initialize and session/new"},
    )
    max_line_mb: int = field(
        default=64,
        metadata={"help": "WEBCLIENT_MAX_LINE_MB: a longer message from an agent is dropped, with a notice (MiB)"},
    )
    acp_protocol: int = field(
        default=1,
        metadata={
            "help": "WEBCLIENT_ACP_PROTOCOL: the ACP version offered to agents, 1 or 2 (the v2 draft; the client "
            "speaks what the agent answers); an agent's acp_protocol in the config file wins"
        },
    )
    root_path: str = field(
        default="",
        metadata={
            "help": "WEBCLIENT_ROOT_PATH: the path prefix the app is served under behind a proxy (e.g. /agents); a "
            "trusted proxy's X-Forwarded-Prefix wins"
        },
    )
    frame_ancestors: str = field(
        default="'self'",
        metadata={"help": "WEBCLIENT_FRAME_ANCESTORS: who may embed the page in a frame (CSP frame-ancestors)"},
    )
    max_entries: int = field(
        default=10_000,
        metadata={
            "help": "WEBCLIENT_MAX_ENTRIES: thread entries a session keeps in memory; beyond it the oldest are dropped"
        },
    )
    drain_seconds: float = field(
        default=60.0,
        metadata={
            "help": "WEBCLIENT_DRAIN_SECONDS: on SIGTERM, how long running turns may finish while no new session "
            "starts (0: stop at once)"
        },
    )
    agent_idle_minutes: float = field(
        default=30.0, metadata={"help": "WEBCLIENT_AGENT_IDLE_MINUTES: an idle agent no page shows sleeps; 0: never"}
    )
    sleep_without_resume: tuple[str, ...] = field(
        default=(), metadata={"help": "WEBCLIENT_SLEEP_WITHOUT_RESUME: agents (names; *) that sleep, unable to resume"}
    )
    instance_url: str | None = field(
        default=None,
        metadata={
            "help": "WEBCLIENT_INSTANCE_URL: where the other instances on one PostgreSQL reach this one "
            "(http://10.0.0.5:8000); default: the address and port it listens on"
        },
    )
    instance_labels: tuple[str, ...] = field(
        default=(),
        metadata={"help": "WEBCLIENT_INSTANCE_LABELS: what this instance offers (gpu,eu), for agents that ask for it"},
    )
    max_ended_sessions: int = field(
        default=20,
        metadata={"help": "WEBCLIENT_MAX_ENDED_SESSIONS: ended sessions kept in memory; older ones are forgotten"},
    )
    checkpoint_max_file_mb: float = field(
        default=10.0,
        metadata={
            "help": "WEBCLIENT_CHECKPOINT_MAX_FILE_MB: files over this size are left out of the checkpoint taken "
            "before each prompt (binary ones are too); 0 turns checkpoints off"
        },
    )
    checkpoint_seconds: float = field(
        default=30.0,
        metadata={"help": "WEBCLIENT_CHECKPOINT_SECONDS: how long a prompt waits for its checkpoint at most"},
    )
    data_dir: Path | None = field(
        default=None,
        metadata={
            "help": "WEBCLIENT_DATA_DIR: where the SQLite store lives; default: the user's data folder (platformdirs)"
        },
    )
    database_url: str | None = field(
        default=None,
        repr=False,  # it may hold a password
        metadata={"help": "WEBCLIENT_DATABASE_URL: postgresql://user@host/db to keep the store there, not in SQLite"},
    )
    store: bool = field(
        default=True, metadata={"help": "WEBCLIENT_STORE: keep sessions and their journals in the store: on or off"}
    )
    keep_days: float = field(
        default=0.0,
        metadata={"help": "WEBCLIENT_KEEP_DAYS: stored sessions last active longer ago are deleted; 0 keeps them all"},
    )
    max_session_mb: float = field(
        default=0.0,
        metadata={
            "help": "WEBCLIENT_MAX_SESSION_MB: a session's journal stops being stored past this many MB of text, with "
            "a notice; 0: no limit"
        },
    )
    max_store_mb: float = field(
        default=0.0,
        metadata={
            "help": "WEBCLIENT_MAX_STORE_MB: past this many MB of journal text in all, the sessions least recently "
            "active are deleted (never a running one); 0: no limit"
        },
    )
    retention_seconds: float = field(
        default=3600.0,
        metadata={"help": "WEBCLIENT_RETENTION_SECONDS: how often the limits above are applied (also at start)"},
    )

    # -- the sandbox (docs/deployment.md, "Sandbox") --
    sandbox: SandboxMode = field(
        default="none",
        metadata={
            "help": "WEBCLIENT_SANDBOX: none (agents run as the server's user) or bwrap (each agent, its commands and "
            "its sign-in in a bubblewrap sandbox: only its workspace and its person's home writable)"
        },
    )
    sandbox_network: bool = field(
        default=True,
        metadata={
            "help": "WEBCLIENT_SANDBOX_NETWORK: whether an agent in a sandbox has the network (on or off); an agent's "
            "network in the config file wins"
        },
    )
    sandbox_read: tuple[Path, ...] = field(
        default=(),
        metadata={"help": "WEBCLIENT_SANDBOX_READ: more folders every sandbox may read (: separated)"},
    )

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> Settings:
        port = env.get("WEBCLIENT_PORT") or env.get("PORT") or "8000"
        workspace = env.get("WEBCLIENT_WORKSPACE")
        origins = env.get("WEBCLIENT_ALLOWED_ORIGINS", "")
        access = env.get("WEBCLIENT_FILE_ACCESS", "read-write").strip().lower()
        if access not in get_args(FileAccess):
            raise ValueError(f"WEBCLIENT_FILE_ACCESS must be one of {', '.join(get_args(FileAccess))}, not {access!r}")
        roots = env.get("WEBCLIENT_EXTRA_ROOTS", "")
        config, registry = env.get("WEBCLIENT_CONFIG"), env.get("WEBCLIENT_REGISTRY")
        auth = env.get("WEBCLIENT_AUTH", "token").strip().lower() or "token"
        if auth not in get_args(Auth):
            raise ValueError(f"WEBCLIENT_AUTH must be one of {', '.join(get_args(Auth))}, not {auth!r}")
        proxies = tuple(p.strip() for p in env.get("WEBCLIENT_TRUSTED_PROXIES", "").split(",") if p.strip())
        proof = ProxyProof.from_env(env)
        if auth == "trusted-header" and not proxies and proof.uds is None:
            raise ValueError("WEBCLIENT_AUTH=trusted-header needs WEBCLIENT_UDS or WEBCLIENT_TRUSTED_PROXIES")
        if auth == "oidc" and not (env.get("WEBCLIENT_OIDC_ISSUER") and env.get("WEBCLIENT_OIDC_CLIENT_ID")):
            raise ValueError("WEBCLIENT_AUTH=oidc needs WEBCLIENT_OIDC_ISSUER and WEBCLIENT_OIDC_CLIENT_ID")
        if auth != "token" and not _bool(env.get("WEBCLIENT_STORE", "on")):
            raise ValueError(f"WEBCLIENT_AUTH={auth} needs the store (WEBCLIENT_STORE): it keeps who owns what")
        root_path = path_prefix(env.get("WEBCLIENT_ROOT_PATH", ""))
        if root_path is None:
            raise ValueError(
                f"WEBCLIENT_ROOT_PATH must be a path such as /agents (letters, digits, -._~ between slashes), not "
                f"{env['WEBCLIENT_ROOT_PATH']!r}"
            )
        sandbox = env.get("WEBCLIENT_SANDBOX", "none").strip().lower() or "none"
        if sandbox not in get_args(SandboxMode):
            raise ValueError(f"WEBCLIENT_SANDBOX must be one of {', '.join(get_args(SandboxMode))}, not {sandbox!r}")
        readable = env.get("WEBCLIENT_SANDBOX_READ", "")
        return cls(
            sandbox=cast(SandboxMode, sandbox),
            sandbox_network=_bool(env.get("WEBCLIENT_SANDBOX_NETWORK", "on")),
            sandbox_read=tuple(Path(r).expanduser().resolve() for r in readable.split(os.pathsep) if r.strip()),
            agent=env.get("WEBCLIENT_AGENT") or None,
            aap_agent=env.get("WEBCLIENT_AAP_AGENT") or None,
            aap_key=env.get("WEBCLIENT_AAP_KEY") or None,
            aap_event_mb=_positive(env, "WEBCLIENT_AAP_EVENT_MB", "8"),
            aap_turn_mb=_positive(env, "WEBCLIENT_AAP_TURN_MB", "64"),
            aap_turn_minutes=_positive(env, "WEBCLIENT_AAP_TURN_MINUTES", "60"),
            aap_idle_seconds=_positive(env, "WEBCLIENT_AAP_IDLE_SECONDS", "300"),
            demo_remote=_bool(env.get("WEBCLIENT_DEMO_REMOTE", "on")),
            config=Path(config).expanduser().resolve() if config else None,
            registry=Path(registry).expanduser().resolve() if registry else None,
            workspace=Path(workspace).expanduser().resolve() if workspace else None,
            host=env.get("WEBCLIENT_HOST", "127.0.0.1"),
            port=int(port),
            reload=_bool(env.get("WEBCLIENT_RELOAD")),
            allowed_origins=tuple(o.strip() for o in origins.split(",") if o.strip()),
            token=env.get("WEBCLIENT_TOKEN") or None,  # empty is "not set", never "no sign-in"
            no_token=_bool(env.get("WEBCLIENT_NO_TOKEN")),
            auth=cast(Auth, auth),
            trusted_header=env.get("WEBCLIENT_TRUSTED_HEADER") or "X-Forwarded-User",
            trusted_email_header=env.get("WEBCLIENT_TRUSTED_EMAIL_HEADER") or None,
            trusted_groups_header=env.get("WEBCLIENT_TRUSTED_GROUPS_HEADER") or None,
            trusted_proxies=proxies,
            proxy_proof=proof,
            admin_group=env.get("WEBCLIENT_ADMIN_GROUP") or "admins",
            oidc_issuer=(env.get("WEBCLIENT_OIDC_ISSUER") or "").rstrip("/") or None,
            oidc_client_id=env.get("WEBCLIENT_OIDC_CLIENT_ID") or None,
            oidc_client_secret=env.get("WEBCLIENT_OIDC_CLIENT_SECRET") or None,
            oidc_scopes=env.get("WEBCLIENT_OIDC_SCOPES") or "openid profile email",
            oidc_groups_claim=env.get("WEBCLIENT_OIDC_GROUPS_CLAIM") or "groups",
            signin_days=_positive(env, "WEBCLIENT_SIGNIN_DAYS", "14"),
            secret_key=env.get("WEBCLIENT_SECRET_KEY") or None,
            max_sessions_per_person=int(_not_negative(env, "WEBCLIENT_MAX_SESSIONS_PER_PERSON")),
            max_agents_per_person=int(_not_negative(env, "WEBCLIENT_MAX_AGENTS_PER_PERSON")),
            max_prompt_mb=_not_negative(env, "WEBCLIENT_MAX_PROMPT_MB", "1"),
            max_queued_prompts=int(_not_negative(env, "WEBCLIENT_MAX_QUEUED_PROMPTS", "20")),
            max_queue_mb=_not_negative(env, "WEBCLIENT_MAX_QUEUE_MB", "16"),
            allowed_hosts=tuple(h.strip() for h in env.get("WEBCLIENT_ALLOWED_HOSTS", "").split(",") if h.strip()),
            root_path=root_path,
            frame_ancestors=env.get("WEBCLIENT_FRAME_ANCESTORS", "'self'"),
            start_timeout=_positive(env, "WEBCLIENT_START_TIMEOUT", "120"),
            max_line_mb=max(1, int(_positive(env, "WEBCLIENT_MAX_LINE_MB", "64"))),
            acp_protocol=acp_protocol(env.get("WEBCLIENT_ACP_PROTOCOL", "1"), "WEBCLIENT_ACP_PROTOCOL"),
            file_access=cast(FileAccess, access),
            terminals=_bool(env.get("WEBCLIENT_TERMINALS", "on")),
            extra_roots=tuple(Path(r).expanduser().resolve() for r in roots.split(os.pathsep) if r.strip()),
            max_entries=max(1, int(env.get("WEBCLIENT_MAX_ENTRIES", "10000"))),
            max_ended_sessions=max(0, int(env.get("WEBCLIENT_MAX_ENDED_SESSIONS", "20"))),
            drain_seconds=_not_negative(env, "WEBCLIENT_DRAIN_SECONDS", "60"),
            agent_idle_minutes=_not_negative(env, "WEBCLIENT_AGENT_IDLE_MINUTES", "30"),
            sleep_without_resume=tuple(
                name.strip() for name in env.get("WEBCLIENT_SLEEP_WITHOUT_RESUME", "").split(",") if name.strip()
            ),
            instance_url=env.get("WEBCLIENT_INSTANCE_URL", "").strip().rstrip("/") or None,
            instance_labels=tuple(x.strip() for x in env.get("WEBCLIENT_INSTANCE_LABELS", "").split(",") if x.strip()),
            checkpoint_max_file_mb=_not_negative(env, "WEBCLIENT_CHECKPOINT_MAX_FILE_MB", "10"),
            checkpoint_seconds=_positive(env, "WEBCLIENT_CHECKPOINT_SECONDS", "30"),
            data_dir=Path(env["WEBCLIENT_DATA_DIR"]).expanduser().resolve() if env.get("WEBCLIENT_DATA_DIR") else None,
            database_url=env.get("WEBCLIENT_DATABASE_URL") or None,
            store=_bool(env.get("WEBCLIENT_STORE", "on")),
            keep_days=_not_negative(env, "WEBCLIENT_KEEP_DAYS"),
            max_session_mb=_not_negative(env, "WEBCLIENT_MAX_SESSION_MB"),
            max_store_mb=_not_negative(env, "WEBCLIENT_MAX_STORE_MB"),
            retention_seconds=_positive(env, "WEBCLIENT_RETENTION_SECONDS", "3600"),
        )
