"""A TCP relay between a server and the database it uses, that a test can cut as a network partition would: from the
cut on, nothing passes either way, and nothing is closed (no reset: the other side just hears nothing, as across a
broken link), new connections included."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator


class Relay:
    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.cut = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._held: list[socket.socket] = []
        self._closing = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closing:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self._closing:
                client.close()
                return
            self._held.append(client)
            if self.cut.is_set():
                continue  # held open, never answered
            upstream = socket.create_connection(self.target)
            self._held.append(upstream)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._copy, args=(source, sink), daemon=True).start()

    def _copy(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                if not self.cut.is_set():  # across the partition it is dropped
                    sink.sendall(data)
            if not self.cut.is_set():
                sink.shutdown(socket.SHUT_WR)  # the end of one side passes on, as a connection's close does

    def close(self) -> None:
        self._closing = True
        self._listener.close()
        for held in self._held:
            with contextlib.suppress(OSError):
                held.close()


@contextlib.contextmanager
def relay_to(host: str, port: int) -> Iterator[Relay]:
    relay = Relay((host, port))
    try:
        yield relay
    finally:
        relay.close()
