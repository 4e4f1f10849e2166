"""Where each session's checkpoints are kept: ``<data>/checkpoints/<session id>.git``
(`webclient.workspace.checkpoints`).

The data folder is the server's own (`webclient.agents.server_files`), so no agent reaches a store through its file
access. Checkpoints are off when ``WEBCLIENT_CHECKPOINT_MAX_FILE_MB`` is 0, and without a store or a data folder.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from webclient.agents.homes import data_folder
from webclient.config import Settings
from webclient.session.agent_spec import MIB
from webclient.workspace.checkpoints import CheckpointStore

CHECKPOINTS = "checkpoints"
"""The data folder's folder of checkpoint stores."""


def store_path(settings: Settings, session_id: str) -> Path:
    """Where session ``session_id``'s checkpoint store is (whether or not it has one)."""
    name = (
        session_id
        if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", session_id)
        else hashlib.sha256(session_id.encode()).hexdigest()
    )
    return data_folder(settings) / CHECKPOINTS / f"{name}.git"


def forget_stores(settings: Settings) -> Callable[[Sequence[str]], None]:
    """What deletes the checkpoint stores of sessions the store's retention deleted (it runs in a thread)."""

    def forget(session_ids: Sequence[str]) -> None:
        for session_id in session_ids:
            shutil.rmtree(store_path(settings, session_id), ignore_errors=True)

    return forget


def checkpoint_store(
    settings: Settings, session_id: str, cwd: Path, hidden: Sequence[Path] = ()
) -> CheckpointStore | None:
    """The store of session ``session_id``'s checkpoints of ``cwd``, which leave out ``hidden`` (the server's own
    files); None when checkpoints are off."""
    if settings.checkpoint_max_file_mb <= 0 or not (settings.store or settings.data_dir):
        return None
    name = (
        session_id
        if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", session_id)
        else hashlib.sha256(session_id.encode()).hexdigest()
    )
    return CheckpointStore(
        data_folder(settings) / CHECKPOINTS / f"{name}.git",
        cwd,
        max_file_bytes=int(settings.checkpoint_max_file_mb * MIB),
        timeout=settings.checkpoint_seconds,
        hidden=hidden,
    )
