"""An answer in parts (framing bytes, records sent from their file by ``sendfile``, more
framing: what a Fetch answer is) reaches the client whole and in order, as few TCP
segments as hold it, and whole too when the client does not read for a while.

These run the broker's real ``KafkaServer`` in this process, on real sockets, with one
API (Heartbeat) whose handler answers with file slices, as the Fetch handler does. The
segments are counted on the client's socket (Linux ``TCP_INFO``: ``tcpi_data_segs_in``),
which is exact whatever the machine's load.
"""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import sys
from collections.abc import AsyncIterator, Sized
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from kio.schema.heartbeat.v4.request import HeartbeatRequest

from kafkalite.broker.handler_registry import HandlerTable
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.codec import EncodedResponse
from kafkalite.storage.file_records import FileRecords
from tests.support.in_process_server import serving
from tests.support.raw import encode_request

pytestmark = [pytest.mark.interop, pytest.mark.asyncio]

HEARTBEAT = HeartbeatRequest(group_id="g", generation_id=1, member_id="m", group_instance_id=None)  # type: ignore[arg-type]
TCP_INFO_DATA_SEGS_IN = 152
"""Offset of ``tcpi_data_segs_in`` (u32) in Linux's ``struct tcp_info`` (since 4.6)."""


class Answer:
    """What the handler answers: ``slices`` (position, size) of ``path`` between framing
    bytes, each slice followed by ``between``."""

    def __init__(self, path: Path, slices: list[tuple[int, int]], between: bytes) -> None:
        self.path = path
        self.slices = slices
        self.between = between

    def parts(self, correlation_id: int) -> list[bytes | Sized]:
        body: list[bytes | Sized] = [struct.pack(">i", correlation_id), b"\x00head"]
        for position, size in self.slices:
            body += [FileRecords(os.open(self.path, os.O_RDONLY), position, size), self.between]
        size = sum(map(len, body))
        return [struct.pack(">i", size) + bytes(body[0]) + bytes(body[1]), *body[2:]]

    def expected(self, correlation_id: int) -> bytes:
        data = self.path.read_bytes()
        body = struct.pack(">i", correlation_id) + b"\x00head"
        for position, size in self.slices:
            body += data[position : position + size] + self.between
        return body


@pytest_asyncio.fixture
async def answering(tmp_path: Path) -> AsyncIterator[tuple[int, list[Answer]]]:
    """A server whose Heartbeat answers are the ``Answer`` the test puts in the list."""
    table = HandlerTable()
    answer: list[Answer] = []

    @table.handles(ApiKeys.HEARTBEAT, 0, 4)
    async def heartbeat(ctx: Any, request: Any) -> Any:
        (current,) = answer
        return EncodedResponse(current.parts(ctx.request.correlation_id))

    async with serving(table) as (_, port):
        yield port, answer


def records_file(tmp_path: Path, size: int) -> Path:
    path = tmp_path / "00000000000000000000.log"
    # varied bytes: a slice sent from the wrong place shows
    path.write_bytes((bytes(range(251)) * (size // 251 + 1))[:size])
    return path


def data_segments_in(writer: asyncio.StreamWriter) -> int:
    sock = writer.get_extra_info("socket")
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    return int(struct.unpack_from("<I", info, TCP_INFO_DATA_SEGS_IN)[0])


async def answer_to(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, correlation_id: int
) -> bytes:
    writer.write(encode_request(HEARTBEAT, correlation_id))
    async with asyncio.timeout(30):
        size = struct.unpack(">i", await reader.readexactly(4))[0]
        return await reader.readexactly(size)


@pytest.mark.skipif(sys.platform != "linux", reason="TCP_CORK and TCP_INFO are Linux's")
async def test_an_answer_in_parts_arrives_as_one_segment(
    answering: tuple[int, list[Answer]], tmp_path: Path
) -> None:
    """Three partitions' records (1 KiB each) between framing bytes: seven parts, one
    segment. Uncorked (asyncio sets ``TCP_NODELAY``) each part was a segment of its own."""
    port, answer = answering
    answer.append(
        Answer(records_file(tmp_path, 4096), [(0, 1024), (1024, 1024), (3000, 1024)], b"\x00\x00")
    )
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        assert await answer_to(reader, writer, 1) == answer[0].expected(1)
        before = data_segments_in(writer)
        for correlation_id in range(2, 12):
            assert await answer_to(reader, writer, correlation_id) == answer[0].expected(
                correlation_id
            )
        assert data_segments_in(writer) - before == 10
    finally:
        writer.close()


async def test_an_answer_bigger_than_the_socket_takes_arrives_whole(
    answering: tuple[int, list[Answer]], tmp_path: Path
) -> None:
    """32 MiB of records, more than the kernel's buffers hold: the server's ``sendfile``
    meets a full socket and waits for the client (this process, not reading until it
    runs again), corked all the while; every byte arrives, in order, and the next answer
    after it too."""
    port, answer = answering
    size = 32 << 20
    answer.append(Answer(records_file(tmp_path, size + 10), [(10, size)], b"\x00"))
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 16)
    try:
        assert await answer_to(reader, writer, 7) == answer[0].expected(7)
        answer[0] = Answer(answer[0].path, [(0, 100)], b"\x00")
        assert await answer_to(reader, writer, 8) == answer[0].expected(8)
    finally:
        writer.close()
