"""``WriteFlowControl``: the write side of a bare ``asyncio.Protocol``, as a stream's.

A transport queues what the socket does not take at once. Past its high-water mark (64
KiB) it calls the protocol's ``pause_writing``, and ``resume_writing`` once the queue is
back under the low-water mark: a peer that does not read would otherwise make the queue
grow with every write. ``drain`` is where a writer waits for that, at no cost while the
transport takes more; any number of writers may wait at once. Shared by both ends of a
connection between Kafka-Lite nodes: the listener's connections (``frame_stream``) and a
node's connections to others (``client``).
"""

from __future__ import annotations

import asyncio
from collections import deque


class WriteFlowControl(asyncio.BaseProtocol):
    """A subclass that overrides ``connection_lost`` calls this one's too: a writer
    waiting in ``drain`` is woken (and told) when the connection is lost."""

    def __init__(self) -> None:
        self._writing_paused = False
        self._drain_waiters: deque[asyncio.Future[None]] = deque()
        self._lost = False

    def pause_writing(self) -> None:
        self._writing_paused = True

    def resume_writing(self) -> None:
        self._writing_paused = False
        self._wake_drained()

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        self._wake_drained()

    @property
    def writing_paused(self) -> bool:
        """The transport has asked to stop: what is written now only waits in its queue."""
        return self._writing_paused

    async def drain(self) -> None:
        """Wait while the peer does not read what was written (``pause_writing``).
        Raises ``ConnectionResetError`` once the connection is lost."""
        if self._lost:
            raise ConnectionResetError("the connection was lost")
        while self._writing_paused:
            drained = asyncio.get_running_loop().create_future()
            self._drain_waiters.append(drained)
            try:
                await drained
            finally:
                self._drain_waiters.remove(drained)
            if self._lost:
                raise ConnectionResetError("the connection was lost")

    def _wake_drained(self) -> None:
        for drained in self._drain_waiters:
            if not drained.done():
                drained.set_result(None)
