"""How the proxy in front proves it is the proxy: an address is no proof (any program on this machine may connect
from any ``127.x.y.z``), so the server listens on a unix socket that only the proxy's user may open
(``WEBCLIENT_UDS``), and/or the proxy sends a shared secret in a header (``WEBCLIENT_PROXY_SECRET_FILE``).

Read once from the environment with the other settings (`webclient.config.Settings.proxy_proof`); what each proves
is `webclient.web.access.trusted_header`'s business, the socket's binding `webclient.web.access.unix_socket`'s.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DEFAULT_SECRET_HEADER = "X-Webclient-Proxy-Secret"
MAX_SOCKET_PATH = 107
"""Bytes of a unix socket's path (``sun_path`` holds 108, the last a NUL)."""


@dataclass(frozen=True)
class ProxyProof:
    """``WEBCLIENT_UDS``, ``WEBCLIENT_UDS_MODE``, ``WEBCLIENT_UDS_GROUP``, ``WEBCLIENT_PROXY_SECRET_FILE`` and
    ``WEBCLIENT_PROXY_SECRET_HEADER`` (the secret itself is read from its file at start, never kept here)."""

    uds: Path | None = None
    """The unix socket to listen on instead of a port (``--uds``); a connection on it is the proxy's."""
    uds_mode: int = 0o660
    """Its permissions: owner and group may connect (connecting takes write permission)."""
    uds_group: str | None = None
    """The group it is given (the proxy's user's, e.g. ``www-data``); None: the server's own."""
    secret_file: Path | None = None
    """A file holding the secret the proxy sends; kept outside anything a sandbox mounts."""
    secret_header: str = DEFAULT_SECRET_HEADER

    @property
    def any(self) -> bool:
        """Whether the proxy has anything to prove itself with besides its address."""
        return self.uds is not None or self.secret_file is not None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ProxyProof:
        """Raises ValueError for a mode that is not octal or lets everyone connect, or a path too long for a socket."""
        uds = Path(env["WEBCLIENT_UDS"]).expanduser().absolute() if env.get("WEBCLIENT_UDS", "").strip() else None
        if uds is not None and len(os.fsencode(uds)) > MAX_SOCKET_PATH:
            raise ValueError(f"WEBCLIENT_UDS: {str(uds)!r} is longer than a unix socket's path may be (107 bytes)")
        raw_mode = env.get("WEBCLIENT_UDS_MODE", "").strip() or "0660"
        try:
            mode = int(raw_mode, 8)
        except ValueError:
            raise ValueError(f"WEBCLIENT_UDS_MODE must be octal permissions such as 0660, not {raw_mode!r}") from None
        if not 0 <= mode <= 0o777 or mode & 0o002:
            raise ValueError(
                f"WEBCLIENT_UDS_MODE {raw_mode!r} lets every user of this machine connect: give the proxy's group "
                "access instead (0660 and WEBCLIENT_UDS_GROUP)"
            )
        secret = env.get("WEBCLIENT_PROXY_SECRET_FILE", "").strip()
        return cls(
            uds=uds,
            uds_mode=mode,
            uds_group=env.get("WEBCLIENT_UDS_GROUP", "").strip() or None,
            secret_file=Path(secret).expanduser().absolute() if secret else None,
            secret_header=env.get("WEBCLIENT_PROXY_SECRET_HEADER", "").strip() or DEFAULT_SECRET_HEADER,
        )
