"""A handler that fails answers UNKNOWN_SERVER_ERROR; a client that hangs up leaves no noise.

These run the broker's real ``KafkaServer`` in this process, on a real socket, with a
handler table whose Produce handler fails on purpose (no real handler can be made to fail
from outside without a bug to exploit): the server, the sockets and the bytes on the wire
are the real ones. Requests are encoded with kio, not with the broker's code.

Seen before the fix: the exception closed the connection, so the client could not tell
what became of its batch, and it was logged twice; a client hanging up while its answers
were still queued left "Task exception was never retrieved" in the broker's log.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import socket
import struct
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from kio.index import load_request_schema

from kafkalite.broker.handler_registry import HandlerTable
from kafkalite.broker.server import KafkaServer
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.errors import ErrorCode
from tests.support.in_process_server import serving
from tests.support.kio_samples import build
from tests.support.raw import RawConnection, encode_request

pytestmark = [pytest.mark.interop, pytest.mark.asyncio]

PRODUCE = 0


def produce_request(acks: int) -> Any:
    request = build(load_request_schema(PRODUCE, 9), "one")
    return type(request)(
        transactional_id=None, acks=acks, timeout=request.timeout, topic_data=request.topic_data
    )


class Failing:
    """The Produce handler's script: requests seen; events that hold the next requests."""

    def __init__(self) -> None:
        self.seen = 0
        self.holds: list[asyncio.Event] = []


@pytest_asyncio.fixture
async def failing_server() -> AsyncIterator[tuple[KafkaServer, int, Failing]]:
    """A server whose Produce handler raises, except that a request may be held first."""
    table = HandlerTable()
    script = Failing()

    @table.handles(ApiKeys.PRODUCE, 3, 9)
    async def produce(ctx: Any, request: Any) -> Any:
        script.seen += 1
        if script.holds:
            await script.holds.pop(0).wait()
        raise RuntimeError("the disk is on fire")

    async with serving(table) as (server, port):
        yield server, port, script


async def test_a_failed_produce_is_answered_per_partition_and_logged_once(
    failing_server: tuple[KafkaServer, int, Failing],
    caplog: pytest.LogCaptureFixture,
) -> None:
    _, port, _ = failing_server
    request = produce_request(acks=1)

    def exchange() -> list[Any]:
        with RawConnection(f"127.0.0.1:{port}") as conn:
            return [conn.request(request), conn.request(request)]  # same connection

    with caplog.at_level(logging.INFO, logger="kafkalite.broker.server"):
        first, second = await asyncio.to_thread(exchange)
    for response in (first, second):
        (topic,) = response.responses
        assert topic.name == request.topic_data[0].name
        (partition,) = topic.partition_responses
        assert partition.index == request.topic_data[0].partition_data[0].index
        assert partition.error_code == ErrorCode.unknown_server_error
        assert "the disk is on fire" in (partition.error_message or "")
    logged = [r for r in caplog.records if r.name == "kafkalite.broker.server"]
    assert len(logged) == 2  # once per failed request, nothing about the connection
    assert all("ProduceRequest" in r.getMessage() for r in logged)
    assert all(request.topic_data[0].name in r.getMessage() for r in logged)


async def test_a_failed_acks_0_produce_closes_the_connection_as_kafka_does(
    failing_server: tuple[KafkaServer, int, Failing],
) -> None:
    _, port, _ = failing_server

    def send_and_read() -> bytes:
        with RawConnection(f"127.0.0.1:{port}") as conn:
            conn.send(produce_request(acks=0))
            return conn.sock.recv(10)

    assert await asyncio.to_thread(send_and_read) == b""  # closed, no answer


async def test_a_client_hanging_up_with_answers_queued_leaves_no_unretrieved_error(
    failing_server: tuple[KafkaServer, int, Failing],
) -> None:
    """Two Produce requests overlap: the first is held, the second fails at once and
    waits in the queue behind it; then the client resets the connection."""
    _, port, script = failing_server
    held = asyncio.Event()
    script.holds.append(held)
    reported: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(encode_request(produce_request(acks=1), 1))
        sock.sendall(encode_request(produce_request(acks=1), 2))
        async with asyncio.timeout(10):
            while script.seen < 2:  # both are being handled: one held, one failed
                await asyncio.sleep(0.01)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # a reset, with both answers still to come
        await asyncio.sleep(0.3)  # the server notices and ends the connection
        held.set()
        await asyncio.sleep(0.05)
        gc.collect()  # unretrieved task exceptions are reported when the task is freed
        await asyncio.sleep(0.05)
    finally:
        loop.set_exception_handler(None)
    assert [c.get("message") for c in reported] == []
