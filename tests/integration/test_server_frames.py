"""The listener's framing: requests answered in order however the bytes arrive, a frame
over ``socket.request.max.bytes`` closing the connection after the answers before it, a
client that half-closes still answered, and a client sending faster than it is served
held back at TCP.

These run the broker's real ``KafkaServer`` in this process, on real sockets, with a
handler table of one API (Heartbeat, whose answer echoes nothing but the correlation
id) whose requests may be held. Requests are encoded with kio, not with the broker's code.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import struct
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from kio.schema.heartbeat.v4.request import HeartbeatRequest
from kio.schema.produce.v9.request import ProduceRequest

from kafkalite.broker.handler_registry import HandlerTable
from kafkalite.broker.server import KafkaServer
from kafkalite.network import frame_stream
from kafkalite.protocol.api_keys import ApiKeys
from tests.support.in_process_server import serving
from tests.support.raw import encode_request

pytestmark = [pytest.mark.interop, pytest.mark.asyncio]

MAX_REQUEST_BYTES = 4096
HEARTBEAT = HeartbeatRequest(group_id="g", generation_id=1, member_id="m", group_instance_id=None)  # type: ignore[arg-type]


class Script:
    """Requests seen, in order; while ``hold`` is clear, requests wait for it."""

    def __init__(self) -> None:
        self.seen: list[int] = []
        self.hold = asyncio.Event()
        self.hold.set()


@pytest_asyncio.fixture
async def server() -> AsyncIterator[tuple[KafkaServer, int, Script]]:
    table = HandlerTable()
    script = Script()

    @table.handles(ApiKeys.HEARTBEAT, 0, 4)
    async def heartbeat(ctx: Any, request: Any) -> Any:
        script.seen.append(ctx.request.correlation_id)
        await script.hold.wait()
        return ctx.schema.HeartbeatResponse(throttle_time=0, error_code=0)

    @table.handles(ApiKeys.PRODUCE, 3, 9)
    async def produce(ctx: Any, request: Any) -> Any:
        script.seen.append(ctx.request.correlation_id)
        await asyncio.sleep(0.05)  # as if waiting for acks=all
        return ctx.schema.ProduceResponse(responses=(), throttle_time=0)

    async with serving(table, MAX_REQUEST_BYTES) as (server, port):
        yield server, port, script


def request(correlation_id: int) -> bytes:
    return encode_request(HEARTBEAT, correlation_id)


async def answers(reader: asyncio.StreamReader, count: int) -> list[int]:
    """The correlation ids of the next ``count`` answers."""
    out = []
    async with asyncio.timeout(10):
        for _ in range(count):
            size = struct.unpack(">i", await reader.readexactly(4))[0]
            out.append(struct.unpack(">i", (await reader.readexactly(size))[:4])[0])
    return out


async def test_requests_cut_anywhere_are_answered_in_order(
    server: tuple[KafkaServer, int, Script],
) -> None:
    """Ten requests sent as one byte string cut in pieces of 1, 3 and 7 bytes, and all at
    once: each answered once, in order."""
    _, port, _ = server
    data = b"".join(request(i) for i in range(1, 11))
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for step in (1, 3, 7):
            for start in range(0, len(data), step):
                writer.write(data[start : start + step])
                await writer.drain()
            assert await answers(reader, 10) == list(range(1, 11))
        writer.write(data)
        assert await answers(reader, 10) == list(range(1, 11))
    finally:
        writer.close()


async def test_a_frame_over_the_limit_closes_after_the_answers_before_it(
    server: tuple[KafkaServer, int, Script], caplog: pytest.LogCaptureFixture
) -> None:
    _, port, script = server
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    with caplog.at_level(logging.INFO, logger="kafkalite.broker.server"):
        writer.write(request(1) + request(2) + struct.pack(">i", MAX_REQUEST_BYTES + 1) + b"x")
        assert await answers(reader, 2) == [1, 2]
        async with asyncio.timeout(10):
            assert await reader.read() == b""  # closed by the server
        writer.close()
        async with asyncio.timeout(10):
            while not any("exceeds" in r.getMessage() for r in caplog.records):
                await asyncio.sleep(0.01)
    (line,) = [r.getMessage() for r in caplog.records if "exceeds" in r.getMessage()]
    assert line.endswith(
        f"frame of {MAX_REQUEST_BYTES + 1} bytes exceeds socket.request.max.bytes"
        f" ({MAX_REQUEST_BYTES})"
    )
    assert script.seen == [1, 2]


async def test_a_client_that_half_closes_is_still_answered(
    server: tuple[KafkaServer, int, Script],
) -> None:
    """A client may send its requests and shut its side down: Kafka answers them."""
    _, port, _ = server
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request(1) + request(2))
    writer.write_eof()
    assert await answers(reader, 2) == [1, 2]
    async with asyncio.timeout(10):
        assert await reader.read() == b""  # then the server closes
    writer.close()


async def test_a_client_that_half_closes_with_produces_in_flight_is_answered(
    server: tuple[KafkaServer, int, Script],
) -> None:
    """Overlapping Produce requests still waiting for their acks when the client shuts
    its side down: each is answered, in order, before the server closes. (Before, the
    end of the client's stream cancelled them unanswered: records appended, never
    acknowledged.)"""
    _, port, script = server
    produce = ProduceRequest(
        transactional_id=None, acks=1, timeout=datetime.timedelta(seconds=5), topic_data=()
    )  # type: ignore[arg-type]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(encode_request(produce, 1) + encode_request(produce, 2))
    writer.write_eof()
    assert await answers(reader, 2) == [1, 2]
    async with asyncio.timeout(10):
        assert await reader.read() == b""
    writer.close()
    assert script.seen == [1, 2]


async def test_a_client_sending_faster_than_it_is_served_is_held_at_tcp(
    server: tuple[KafkaServer, int, Script],
) -> None:
    """Requests are served one at a time; while one is held, the server reads ahead no
    more than ``READ_AHEAD_BYTES`` of whole frames and then stops reading the socket, so
    what the client sends on waits in the kernel's buffers and then the client's, not in
    the broker's memory. Once the held request is let go, every request is answered, in
    order."""
    broker, port, script = server
    script.hold.clear()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    big = HeartbeatRequest(group_id="g" * 3000, generation_id=1, member_id="m")  # type: ignore[arg-type]
    frames = [encode_request(big, i) for i in range(1, 701)]
    assert sum(map(len, frames)) > 10 * frame_stream.READ_AHEAD_BYTES
    writer.write(b"".join(frames))
    async with asyncio.timeout(10):
        while not script.seen:
            await asyncio.sleep(0.01)
        (stream,) = broker._streams
        while stream.transport.is_reading():  # the read-ahead fills up
            await asyncio.sleep(0.01)
    assert script.seen == [1]
    one_read = 256 * 1024  # the most asyncio's transport reads at once
    assert stream.queued_bytes <= frame_stream.READ_AHEAD_BYTES + one_read
    script.hold.set()
    assert await answers(reader, len(frames)) == list(range(1, len(frames) + 1))
    writer.close()
