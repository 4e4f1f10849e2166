"""What is the server's own and no agent's, whatever folders an agent is given: its data folder (the store, the key
people's secrets are kept with, every person's home and agent logins), a SQLite store kept elsewhere, and the config
and registry files (an agent's ``env`` may hold keys).

The server reads and writes files for agents and people outside any sandbox (an agent's ``fs/*`` requests, a
remote agent's tools, ``/file``, mentions, Changes), so each session's `Workspace` refuses these (its ``hidden``)
even where a root holds them; and a root that holds the data folder, or lies in it, is refused at start.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from webclient.agents.homes import data_folder
from webclient.config import Settings
from webclient.session.person_folders import above_people

__all__ = ["root_holding_data", "server_files", "server_folders"]


def server_folders(settings: Settings) -> list[Path]:
    """The server's own folders: the data folder, and the folder of a SQLite store kept elsewhere."""
    folders = [data_folder(settings)]
    url = settings.database_url or ""
    if url.startswith("sqlite") and ":///" in url:
        folders.append(Path(url.split(":///", 1)[1].split("?", 1)[0]).parent)
    return folders


def server_files(settings: Settings, catalogue_files: Iterable[Path]) -> tuple[Path, ...]:
    """Everything of the server's that no file request may reach: its folders, its config and registry files."""
    return tuple(dict.fromkeys([*server_folders(settings), *catalogue_files]))


def root_holding_data(settings: Settings, roots: Iterable[tuple[str, Path]]) -> str | None:
    """The line the server refuses to start with when one of the agents' ``roots`` (each with the agent's name)
    holds its data folder or lies in it; None when none does. A root with ``{person}`` is judged by the folder that
    holds every person's folder."""
    data = data_folder(settings).resolve()
    for agent, root in roots:
        folder = above_people(root).resolve()
        if data.is_relative_to(folder) or folder.is_relative_to(data):
            where = "holds" if data.is_relative_to(folder) else "lies in"
            return (
                f"the agent {agent} may use {folder}, which {where} the server's data folder {data} (its store, the "
                "secrets' key, people's homes and agent logins): give the agent a workspace apart from it "
                "(--workspace, or workspace in the config file) or move the data folder (WEBCLIENT_DATA_DIR)"
            )
    return None
