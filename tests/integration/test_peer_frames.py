"""A node's connection to another (``network.client.PeerConnection``) reading answers
however their bytes arrive: an answer cut across reads, several answers (out of order)
in one read, a connection lost or reset with requests in flight, a request that times
out (its connection goes with it), and a peer that does not read.

The other node here is a bare asyncio listener of this test, not a broker, so that each
test decides how an answer's bytes go on the wire. Requests go through ``forward`` (a
request frame out, its answer frame back, correlation ids swapped): each answer echoes
its request's payload, so that a test sees which request got which answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import pytest_asyncio

from kafkalite.network.client import PeerConnection, PeerTimeoutError, PeerUnavailableError

pytestmark = [pytest.mark.interop, pytest.mark.asyncio]

TIMEOUT_S = 10.0
"""Longer than any of these tests takes: a request that fails with ``PeerTimeoutError``
here waited for nothing that came, where it should have failed at once."""


@dataclass
class Request:
    correlation_id: int
    payload: bytes
    writer: asyncio.StreamWriter

    def answer(self) -> bytes:
        """The whole answer frame, size prefix included: the payload, echoed."""
        body = struct.pack(">i", self.correlation_id) + self.payload
        return struct.pack(">i", len(body)) + body


class OtherNode:
    """Takes request frames on every connection it accepts and queues them for the test,
    which answers (or not) as it chooses."""

    def __init__(self) -> None:
        self.requests: asyncio.Queue[Request] = asyncio.Queue()
        self.connections: list[asyncio.StreamWriter] = []
        self.reading = True

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections.append(writer)
        if not self.reading:
            return
        try:
            while True:
                size = struct.unpack(">i", await reader.readexactly(4))[0]
                frame = await reader.readexactly(size)
                cid = struct.unpack_from(">i", frame, 4)[0]
                await self.requests.put(Request(cid, frame[8:], writer))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass

    async def take(self, count: int) -> list[Request]:
        async with asyncio.timeout(TIMEOUT_S):
            return [await self.requests.get() for _ in range(count)]


@pytest_asyncio.fixture
async def node() -> AsyncIterator[tuple[OtherNode, PeerConnection]]:
    other = OtherNode()
    server = await asyncio.start_server(other.serve, "127.0.0.1", 0)
    peer = PeerConnection("127.0.0.1", server.sockets[0].getsockname()[1], "t")
    try:
        yield other, peer
    finally:
        await peer.close()
        for writer in other.connections:
            writer.transport.abort()
        server.close()
        await server.wait_closed()


def frame(client_cid: int, payload: bytes) -> bytes:
    """A request frame as a client sends it (no size prefix): ApiVersions v0's header."""
    return struct.pack(">hhi", 18, 0, client_cid) + payload


async def forward(peer: PeerConnection, payload: bytes, timeout_s: float = TIMEOUT_S) -> bytes:
    """The payload of the answer, checking that the client's correlation id is put back."""
    answer = await peer.forward(frame(777, payload), timeout_s)
    assert struct.unpack_from(">i", answer)[0] == 777
    return answer[4:]


def in_flight(peer: PeerConnection, *payloads: bytes) -> list[asyncio.Task[bytes]]:
    return [asyncio.create_task(forward(peer, payload)) for payload in payloads]


async def test_an_answer_cut_across_reads_is_put_together(
    node: tuple[OtherNode, PeerConnection],
) -> None:
    other, peer = node
    big = bytes(range(256)) * 1200  # 300 KiB: more than one read takes (256 KiB)
    (task,) = in_flight(peer, big)
    (request,) = await other.take(1)
    answer = request.answer()
    # the size prefix cut in two, then the rest in pieces, each sent on its own
    for start, end in [(0, 2), (2, 5), (5, 100_000), (100_000, len(answer))]:
        request.writer.write(answer[start:end])
        await request.writer.drain()
        await asyncio.sleep(0.01)  # so that each piece is a read of its own
    assert await task == big
    (after,) = in_flight(peer, b"next")
    (request,) = await other.take(1)
    request.writer.write(request.answer())
    assert await after == b"next"  # nothing of the first answer was left behind


async def test_answers_arriving_together_go_to_their_own_requests(
    node: tuple[OtherNode, PeerConnection],
) -> None:
    other, peer = node
    tasks = in_flight(peer, b"one", b"two", b"three")
    first, second, third = await other.take(3)
    # in one write, out of order: two whole answers and the start of the third
    together = third.answer() + second.answer() + first.answer()[:6]
    first.writer.write(together)
    assert await tasks[2] == b"three"
    assert await tasks[1] == b"two"
    assert not tasks[0].done()
    first.writer.write(first.answer()[6:])
    assert [await task for task in tasks] == [b"one", b"two", b"three"]


async def test_a_lost_connection_fails_every_request_in_flight_and_the_next_reopens(
    node: tuple[OtherNode, PeerConnection],
) -> None:
    other, peer = node
    tasks = in_flight(peer, b"one", b"two")
    first, _ = await other.take(2)
    first.writer.write(first.answer()[:7])  # half an answer, then a reset
    await first.writer.drain()
    sock = first.writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    first.writer.transport.abort()
    for outcome in await asyncio.gather(*tasks, return_exceptions=True):
        assert isinstance(outcome, PeerUnavailableError)
        assert not isinstance(outcome, PeerTimeoutError)
    (task,) = in_flight(peer, b"three")
    (request,) = await other.take(1)
    assert request.writer is not first.writer
    request.writer.write(request.answer())
    assert await task == b"three"
    assert len(other.connections) == 2


async def test_reset_fails_every_request_in_flight_at_once(
    node: tuple[OtherNode, PeerConnection],
) -> None:
    other, peer = node
    tasks = in_flight(peer, b"one", b"two")
    await other.take(2)  # and never answered
    peer.reset()
    for outcome in await asyncio.gather(*tasks, return_exceptions=True):
        assert isinstance(outcome, PeerUnavailableError)
        assert not isinstance(outcome, PeerTimeoutError)
    (task,) = in_flight(peer, b"three")
    (request,) = await other.take(1)
    request.writer.write(request.answer())
    assert await task == b"three"
    assert len(other.connections) == 2


async def test_a_request_timeout_drops_the_connection_and_fails_the_rest_as_timeouts(
    node: tuple[OtherNode, PeerConnection],
) -> None:
    """As Kafka's ``NetworkClient``: a connection that left a request unanswered past its
    timeout may be one whose far end vanished (a proxy's onward connect hanging, a host
    gone), which would hold every later request too. The requests still in flight on it
    fail at once, as timeouts (the peer may only be busy); the next goes on a new
    connection, and a late answer on the old one is never taken for it."""
    other, peer = node
    patient = asyncio.create_task(forward(peer, b"patient"))
    with pytest.raises(PeerTimeoutError):
        await forward(peer, b"slow", timeout_s=0.2)
    with pytest.raises(PeerTimeoutError):
        async with asyncio.timeout(TIMEOUT_S / 2):  # failed with it, not at its own timeout
            await patient
    first, slow = await other.take(2)
    (task,) = in_flight(peer, b"next")
    (following,) = await other.take(1)
    assert following.writer is not slow.writer
    with contextlib.suppress(ConnectionError):
        slow.writer.write(slow.answer() + first.answer())
    following.writer.write(following.answer())
    assert await task == b"next"
    assert len(other.connections) == 2


async def test_a_peer_that_does_not_read_is_not_sent_more_than_it_holds_back(
    node: tuple[OtherNode, PeerConnection],
) -> None:
    """The transport asks to stop writing (``pause_writing``) past 64 KiB unsent: the
    requests after that wait instead of piling up in memory, and time out."""
    other, peer = node
    other.reading = False
    mib = b"x" * (1 << 20)
    tasks = [asyncio.create_task(forward(peer, mib, timeout_s=2.0)) for _ in range(16)]
    await asyncio.sleep(1.0)  # all written that will be, none timed out yet
    # the kernel's socket buffers took a few MiB; what is left waiting in the transport
    # is at most one request past the mark, where all 16 would leave 10 MiB or more
    unsent = peer._reader.transport.get_write_buffer_size()  # type: ignore[union-attr]
    assert unsent < 2 << 20
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(outcome, PeerTimeoutError) for outcome in outcomes)
