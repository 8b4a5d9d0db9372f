"""``PeerConnection``: one node's client connection to another node's listener.

Brokers talk to each other in the Kafka protocol, as Kafka's do: voters send Vote and
Fetch to each other, brokers send BrokerHeartbeat to the controller and Fetch to partition
leaders. Responses are matched to requests by correlation id, so several requests may be in
flight on one connection (a parked quorum Fetch does not hold up a heartbeat). A broken
connection, or one that left a request unanswered past its timeout, fails every request in
flight and is reopened by the next request; nothing here retries, because each caller
knows best whether a retry is safe.

Responses are read by a bare ``asyncio.BufferedProtocol`` (``_ResponseReader``) into the
buffers ``protocol.framing`` gives (a follower's 1 MiB Fetch answer straight into one of
its own), each read split into frames as it arrives (as the listener's ``FrameStream``),
and each frame completes the future of the request with its correlation id, right there.
A follower's Fetches, a quorum's Fetches and Votes all come this way, so this is a share
of every acks=all Produce (issue 29). An asyncio ``StreamReader`` cost a reader task's
wake-up and two ``readexactly`` calls per response, and each request an
``asyncio.timeout`` and an ``asyncio.shield``; here a response costs one
``buffer_updated``, and a request's timeout is one timer (``loop.call_at``, as the
purgatory's waiters) that fails its future at the deadline.
"""

from __future__ import annotations

import asyncio
import itertools
import struct
from collections.abc import Callable
from typing import Any

from kafkalite.network.flow_control import WriteFlowControl
from kafkalite.protocol.codec import decode_response, encode_request, response_correlation_id
from kafkalite.protocol.framing import FrameSplitter, ReceivedFrame

_SIZE = struct.Struct(">i")
_CORRELATION = struct.Struct(">i")
_ANY_SIZE = 0x7FFFFFFF
"""No bound on a response's size (as Kafka's clients have none): it is as large as its
request allowed. Only a negative size, which no frame can have, ends the connection."""


class PeerUnavailableError(ConnectionError):
    """The peer could not be reached, or did not answer in time."""


class PeerTimeoutError(PeerUnavailableError):
    """The peer did not answer (or accept the connection) in time: it may be busy, paused
    or cut off, where a refused or reset connection says that nothing listens there."""


class PeerConnection:
    """A lazily (re)opened connection to ``host:port``. Owned by one event loop."""

    def __init__(
        self, host: str, port: int, client_id: str, connect_timeout_s: float = 1.0
    ) -> None:
        self.host = host
        self.port = port
        self.client_id = client_id
        self.connect_timeout_s = connect_timeout_s
        self._reader: _ResponseReader | None = None
        self._ids = itertools.count(1)
        self._connecting: asyncio.Lock = asyncio.Lock()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    async def request(
        self,
        body: Any,
        timeout_s: float,
        correlation_id: int | None = None,
        read: Callable[[ReceivedFrame], Any | None] | None = None,
    ) -> Any:
        """Send a kio request entity and return the decoded response body: read by
        ``read`` where that reads it (a hand reader), else by kio."""
        cid = next(self._ids) if correlation_id is None else correlation_id
        frame = encode_request(body, cid, self.client_id)
        response = await self._round_trip(cid, frame, timeout_s)
        answer = None if read is None else read(response)
        return (
            answer
            if answer is not None
            else decode_response(body.__api_key__, body.__version__, response)
        )

    async def forward(self, frame: ReceivedFrame, timeout_s: float) -> bytes:
        """Send a client's request frame (no size prefix) as is and return the response
        frame (no size prefix) with the client's correlation id put back."""
        client_cid = _CORRELATION.unpack_from(frame, 4)[0]
        cid = next(self._ids)
        ours = bytearray(_SIZE.pack(len(frame)) + frame)
        _CORRELATION.pack_into(ours, 8, cid)
        response = bytearray(await self._round_trip(cid, bytes(ours), timeout_s))
        _CORRELATION.pack_into(response, 0, client_cid)
        return bytes(response)

    async def _round_trip(self, cid: int, frame: bytes, timeout_s: float) -> ReceivedFrame:
        """Raises ``PeerTimeoutError`` at ``timeout_s`` without an answer (the frame may
        still be waiting to be sent then, if the peer does not read; the connection is
        dropped), and ``PeerUnavailableError`` when the connection breaks first."""
        reader = self._reader
        if reader is None or reader.transport.is_closing():
            reader = await self._connect()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        future: asyncio.Future[ReceivedFrame] = loop.create_future()
        pending = reader.pending
        pending[cid] = future
        timer = loop.call_at(deadline, self._expire, reader, future, timeout_s)
        try:
            try:
                if reader.writing_paused:
                    # the peer does not read: queue nothing more for it until it does
                    async with asyncio.timeout_at(deadline):
                        await reader.drain()
                reader.transport.write(frame)
            except TimeoutError:
                pass  # the timer fails ``future``: it says why
            except ConnectionError as exc:  # lost while waiting: maybe after it failed all
                if not future.done():
                    future.set_exception(PeerUnavailableError(f"{self.address}: {exc}"))
            return await future
        finally:
            timer.cancel()
            pending.pop(cid, None)

    def _expire(
        self, reader: _ResponseReader, future: asyncio.Future[ReceivedFrame], timeout_s: float
    ) -> None:
        """Fail an unanswered request and drop its connection, as Kafka's
        ``NetworkClient`` does on a request timeout: a connection whose far end vanished
        without a reset (a peer's host gone, a proxy's onward connect hanging) would hold
        every later request too, until TCP gives up minutes later. The requests still in
        flight on it fail as timeouts, not as a peer gone: nothing said it was."""
        if future.done():
            return
        error = PeerTimeoutError(f"{self.address} did not answer in {timeout_s}s")
        future.set_exception(error)
        if self._reader is reader:
            self._reader = None
        reader.close(error)

    async def _connect(self) -> _ResponseReader:
        async with self._connecting:
            reader = self._reader
            if reader is not None and not reader.transport.is_closing():
                return reader
            loop = asyncio.get_running_loop()
            try:
                async with asyncio.timeout(self.connect_timeout_s):
                    _, reader = await loop.create_connection(
                        lambda: _ResponseReader(self.address), self.host, self.port
                    )
            except TimeoutError as exc:
                raise PeerTimeoutError(f"cannot connect to {self.address}: {exc}") from None
            except OSError as exc:
                raise PeerUnavailableError(f"cannot connect to {self.address}: {exc}") from None
            if reader.transport.is_closing():  # lost before it was handed over
                raise PeerUnavailableError(f"{self.address} closed the connection")
            self._reader = reader
            return reader

    def reset(self) -> None:
        """Drop the connection now: a request in flight fails with
        ``PeerUnavailableError``, and the next request opens a new connection. For a
        caller that no longer wants an answer the peer may hold back for long, from a
        peer that answers a connection's requests in order."""
        self._disconnect(ConnectionAbortedError("reset by this side"))

    def _disconnect(self, error: Exception) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close(error)

    async def close(self) -> None:
        self._disconnect(ConnectionAbortedError("closed"))


class _ResponseReader(WriteFlowControl, asyncio.BufferedProtocol):
    """One connection's reading side: splits what the peer sends into response frames
    and completes, for each, the request waiting for its correlation id. A lost
    connection fails every request still waiting on it."""

    def __init__(self, address: str) -> None:
        super().__init__()
        self.address = address
        self.pending: dict[int, asyncio.Future[ReceivedFrame]] = {}
        """The requests sent on this connection and not yet answered, by correlation id."""
        self._splitter = FrameSplitter(_ANY_SIZE)
        self.transport: asyncio.Transport

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._splitter.buffer()

    def buffer_updated(self, nbytes: int) -> None:
        pending = self.pending
        splitter = self._splitter
        for frame in splitter.received(nbytes):
            future = pending.pop(response_correlation_id(frame), None)
            if future is not None and not future.done():
                future.set_result(frame)
        if splitter.error is not None:
            self.close(splitter.error)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self._fail(exc or ConnectionResetError(f"{self.address} closed the connection"))

    def close(self, error: Exception) -> None:
        """Close the connection now, failing every request waiting on it with ``error``.
        What the transport still holds to send is dropped (``abort``): those requests
        have just failed, and a peer that does not read would hold a ``close`` back."""
        self._fail(error)
        self.transport.abort()

    def _fail(self, error: Exception) -> None:
        pending, self.pending = self.pending, {}
        kind = PeerTimeoutError if isinstance(error, PeerTimeoutError) else PeerUnavailableError
        for future in pending.values():
            if not future.done():
                future.set_exception(kind(f"{self.address}: {error}"))
