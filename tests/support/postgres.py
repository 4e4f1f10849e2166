"""A throw-away PostgreSQL cluster (Debian's postgresql, see ``scripts/ensure-postgresql``) on a free loopback port,
with its socket in its own tmp folder; as root the server runs as the ``postgres`` user, which owns its folder."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.servers import free_port

_IN_MEMORY = "/dev/shm"
"""Where a cluster lives when it can (tmpfs): deleting a cluster's thousand files from a busy disk took seconds at
the end of each test worker, and its databases are thrown away anyway."""


def _as_server_user(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.getuid() == 0 else argv


class Cluster:
    def __init__(self, bin_dir: Path, folder: Path, port: int) -> None:
        self.bin_dir = bin_dir
        self.folder = folder
        self.port = port
        self.migrated: str | None = None
        """The database `migrated_database` copies, once made."""

    def run(self, tool: str, *args: str) -> None:
        subprocess.run(_as_server_user([str(self.bin_dir / tool), *args]), check=True, capture_output=True, timeout=60)

    def new_database(self, template: str = "template1") -> str:
        """A database of its own, a copy of ``template`` (by default an empty one)."""
        name = "store_" + secrets.token_hex(6)
        self.run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-T", template, name)
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def migrated_database(self) -> str:
        """A database of its own already at the newest migration: a copy of one migrated once per cluster, so that
        a test of what the store does with its tables does not run every migration again (a second of Alembic on a
        busy machine). Tests of migrating take `new_database`."""
        if self.migrated is None:
            import asyncio

            from tests.support.servers import off_the_loop
            from webclient.store.database import create_engine, migrate

            url = self.new_database()

            async def make() -> None:
                engine = create_engine(url)
                await migrate(engine)
                await engine.dispose()  # no connection left: a database is copied only while none is open

            off_the_loop(lambda: asyncio.run(make()))
            self.migrated = url.rsplit("/", 1)[1]
        return self.new_database(template=self.migrated)


@contextlib.contextmanager
def running_cluster(prefix: str, password: str | None = None) -> Iterator[Cluster]:
    """A throw-away PostgreSQL cluster on a free loopback port, stopped and deleted afterwards; with ``password``,
    ``postgres`` must give it (scram-sha-256), else anyone on loopback is trusted."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        pytest.fail("PostgreSQL is not installed: run scripts/ensure-postgresql")
    bin_dir = Path(found[-1]).parent
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=_IN_MEMORY if os.access(_IN_MEMORY, os.W_OK) else None))
    folder.chmod(0o755)
    auth = ["--auth=trust"]
    if password is not None:
        (folder / "password").write_text(password + "\n")
        auth = ["--auth=scram-sha-256", f"--pwfile={folder / 'password'}"]
    if os.getuid() == 0:
        user = pwd.getpwnam("postgres")
        for path in folder.iterdir():
            os.chown(path, user.pw_uid, user.pw_gid)
        os.chown(folder, user.pw_uid, user.pw_gid)
    cluster = Cluster(bin_dir, folder, free_port())
    data = str(folder / "data")
    cluster.run("initdb", "-D", data, "-U", "postgres", *auth, "-E", "UTF8", "--no-sync")
    for attempt in range(5):
        options = f"-p {cluster.port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        try:
            cluster.run("pg_ctl", "-D", data, "-o", options, "-l", str(folder / "log"), "-w", "start")
            break
        except subprocess.CalledProcessError:
            # The port was free when chosen, but initdb takes a second in which another test may take it.
            if attempt == 4 or "Address already in use" not in (folder / "log").read_text(errors="replace"):
                raise
            cluster.port = free_port()
    try:
        yield cluster
    finally:
        cluster.run("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)
