"""Several instances of one service on one PostgreSQL, as the tests start them: what they share, and a script (or a
browser) signed in to all of them at once."""

from __future__ import annotations

import dataclasses

from tests.support.postgres import Cluster
from tests.support.servers import Server

TOKEN = "one-token-for-every-instance"
KEY = "one-server-key-for-every-instance"


def one_service(postgresql: Cluster) -> dict[str, str]:
    """What the instances of one service share: a new database, the sign-in token and the server key."""
    return {"WEBCLIENT_DATABASE_URL": postgresql.new_database(), "WEBCLIENT_TOKEN": TOKEN, "WEBCLIENT_SECRET_KEY": KEY}


def signed_in(server: Server) -> Server:
    """``server`` as a script or browser signed in to the service sees it (the shared token)."""
    return dataclasses.replace(server, token=TOKEN)
