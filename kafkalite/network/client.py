"""``PeerConnection``: one node's client connection to another node's listener.

Brokers talk to each other in the Kafka protocol, as Kafka's do: voters send Vote and
Fetch to each other, brokers send BrokerHeartbeat to the controller and Fetch to partition
leaders. Responses are matched to requests by correlation id, so several requests may be in
flight on one connection (a parked quorum Fetch does not hold up a heartbeat). A broken
connection fails every request in flight and is reopened by the next request; nothing here
retries, because each caller knows best whether a retry is safe.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import struct
from typing import Any

from kafkalite.protocol.codec import decode_response, encode_request, response_correlation_id

_SIZE = struct.Struct(">i")
_CORRELATION = struct.Struct(">i")


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
        self._writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._pending: dict[int, asyncio.Future[bytes]] = {}
        self._ids = itertools.count(1)
        self._connecting: asyncio.Lock = asyncio.Lock()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    async def request(self, body: Any, timeout_s: float, correlation_id: int | None = None) -> Any:
        """Send a kio request entity and return the decoded response body."""
        cid = next(self._ids) if correlation_id is None else correlation_id
        frame = encode_request(body, cid, self.client_id)
        response = await self._round_trip(cid, frame, timeout_s)
        return decode_response(body.__api_key__, body.__version__, response)

    async def forward(self, frame: bytes, timeout_s: float) -> bytes:
        """Send a client's request frame (no size prefix) as is and return the response
        frame (no size prefix) with the client's correlation id put back."""
        client_cid = _CORRELATION.unpack_from(frame, 4)[0]
        cid = next(self._ids)
        ours = bytearray(_SIZE.pack(len(frame)) + frame)
        _CORRELATION.pack_into(ours, 8, cid)
        response = bytearray(await self._round_trip(cid, bytes(ours), timeout_s))
        _CORRELATION.pack_into(response, 0, client_cid)
        return bytes(response)

    async def _round_trip(self, cid: int, frame: bytes, timeout_s: float) -> bytes:
        writer = await self._connect()
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._pending[cid] = future
        try:
            writer.write(frame)
            async with asyncio.timeout(timeout_s):
                await asyncio.shield(future)
        except TimeoutError:
            raise PeerTimeoutError(f"{self.address} did not answer in {timeout_s}s") from None
        except (ConnectionError, OSError) as exc:
            self._disconnect(exc)
            raise PeerUnavailableError(f"{self.address}: {exc}") from exc
        finally:
            self._pending.pop(cid, None)
        return future.result()

    async def _connect(self) -> asyncio.StreamWriter:
        async with self._connecting:
            if self._writer is not None and not self._writer.is_closing():
                return self._writer
            try:
                async with asyncio.timeout(self.connect_timeout_s):
                    reader, writer = await asyncio.open_connection(self.host, self.port)
            except TimeoutError as exc:
                raise PeerTimeoutError(f"cannot connect to {self.address}: {exc}") from None
            except OSError as exc:
                raise PeerUnavailableError(f"cannot connect to {self.address}: {exc}") from None
            self._writer = writer
            self._reader_task = asyncio.create_task(self._read(reader, writer))
            return writer

    async def _read(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        error: Exception = ConnectionResetError(f"{self.address} closed the connection")
        try:
            while True:
                size = _SIZE.unpack(await reader.readexactly(4))[0]
                frame = await reader.readexactly(size)
                future = self._pending.get(response_correlation_id(frame))
                if future is not None and not future.done():
                    future.set_result(frame)
        except (asyncio.IncompleteReadError, ConnectionError, OSError) as exc:
            error = exc if isinstance(exc, ConnectionError) else ConnectionResetError(str(exc))
        finally:
            if self._writer is writer:
                self._disconnect(error)

    def reset(self) -> None:
        """Drop the connection now: a request in flight fails with
        ``PeerUnavailableError``, and the next request opens a new connection. For a
        caller that no longer wants an answer the peer may hold back for long, from a
        peer that answers a connection's requests in order."""
        self._disconnect(ConnectionAbortedError("reset by this side"))

    def _disconnect(self, error: Exception) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(PeerUnavailableError(f"{self.address}: {error}"))

    async def close(self) -> None:
        self._disconnect(ConnectionAbortedError("closed"))
        task, self._reader_task = self._reader_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
