"""What a handler sees of one request: the request, and the connection it came on.

The broker's services are not here: each handler class names the ones it needs in its
constructor (see ``handlers.registry``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kafkalite.network.frame_stream import FrameStream
from kafkalite.protocol.codec import Request, VersionedSchema, response_schema


class Connection:
    """One accepted connection: who is at the other end (``peer``), and what to do when
    that end closes it. A peer's end closes (EOF, or a reset) when its process exits or
    dies: the operating system closes the sockets of a killed process. This is how the
    active controller knows at once that a broker's process is gone (``on_peer_closed``);
    a paused or cut-off peer closes nothing. Owned by the server's loop."""

    def __init__(self, peer: str) -> None:
        self.peer = peer
        self._on_peer_closed: list[Callable[[], None]] = []
        self.open = True
        self.closing_here = False
        """This side decided to close it (a request it could not serve): whatever the
        reading then sees, the peer did not hang up."""

    def on_peer_closed(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once, if and when the peer closes this connection (not when
        this side closes it: a bad frame, the listener stopping)."""
        self._on_peer_closed.append(callback)

    def close_here(self, stream: FrameStream) -> None:
        """Close the connection from this side."""
        self.closing_here = True
        stream.close()

    def closed(self, by_peer: bool) -> None:
        """The server saw the connection end; ``by_peer``: the other end closed it."""
        self.open = False
        callbacks, self._on_peer_closed = self._on_peer_closed, []
        if by_peer:
            for callback in callbacks:
                callback()


@dataclass(slots=True)
class RequestContext:
    request: Request
    peer: str
    connection: Connection = field(default_factory=lambda: Connection("?"))

    @property
    def version(self) -> int:
        return self.request.api_version

    @property
    def schema(self) -> VersionedSchema:
        """The response classes of this request's API version."""
        return response_schema(self.request.api_key, self.request.api_version)
