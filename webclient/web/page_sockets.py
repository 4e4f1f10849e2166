"""The pages' sockets as uvicorn serves them, with its shutdown made safe for a socket that is already closing."""

from __future__ import annotations

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol


class PageSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's socket (the one its ``ws="auto"`` picks), whose shutdown leaves alone a socket that is closing.

    uvicorn 0.54 sends a close frame to every socket at shutdown. One that the browser closed a moment before has
    answered that close already (it is closing, waiting to write what it holds), so the frame raised ``InvalidState``
    out of the server's shutdown, and the lifespan's end (agents stopped in order, the journal's last batch written)
    never ran."""

    def shutdown(self) -> None:
        if self.transport.is_closing():
            self.stop_keepalive()
            return
        super().shutdown()
