"""The grader's Kafka proxy: the sandbox reaches the grading cluster only through it.

Each broker gets a port of the proxy; the sandboxed submission is given those ports as its
bootstrap servers, and every address the cluster hands out (in Metadata, FindCoordinator
and DescribeCluster answers) is rewritten to the proxy's, so a client that follows the
cluster's directions still comes through here. That is what lets the grader see, from
outside the submission's process, every request that changes durable state (a produce,
an offset commit, a transaction's steps) and stop the submission right at it: each one is
shown to the :class:`~grader.gate.StepGate` before it is forwarded, and again once the
broker answered, before the answer is delivered. A request the gate refuses is never
forwarded, an answer it refuses never delivered, and the connection is cut.

The proxy reads only request and response headers, and decodes the few bodies it needs
(the durable requests, to name them; the address-bearing answers, to rewrite them) with
the protocol codec the broker uses. It runs its own event loop on a thread of the
grader's process.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import struct
import threading
from collections import deque
from collections.abc import Mapping
from typing import Any

from grader.crash_points import Step
from grader.gate import Passage, StepGate
from kafkalite.protocol.codec import (
    decode_request,
    decode_response,
    encode_response,
    peek_api,
    response_correlation_id,
)

PRODUCE, METADATA, OFFSET_COMMIT, FIND_COORDINATOR = 0, 3, 8, 10
ADD_OFFSETS_TO_TXN, END_TXN, TXN_OFFSET_COMMIT, DESCRIBE_CLUSTER = 25, 26, 28, 60
DURABLE = frozenset({PRODUCE, OFFSET_COMMIT, ADD_OFFSETS_TO_TXN, END_TXN, TXN_OFFSET_COMMIT})
ADDRESSED = frozenset({METADATA, FIND_COORDINATOR, DESCRIBE_CLUSTER})
MAX_FRAME = 64 << 20
HEARD_BACK = "once the broker had carried it out but before your program heard back"
_SIZE = struct.Struct(">i")
_RECORD_COUNT = struct.Struct(">i")
RECORD_COUNT_AT = 57  # a v2 record batch: its record count's position
BATCH_LENGTH_AT = 8


class KafkaProxy:
    """One listening port per broker, forwarding to it and reporting to ``gate``."""

    def __init__(
        self, brokers: Mapping[int, tuple[str, int]], gate: StepGate, host: str = "127.0.0.1"
    ) -> None:
        self.brokers = dict(brokers)
        self.gate = gate
        self.host = host
        self.ports: dict[int, int] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._servers: list[asyncio.Server] = []
        self._connections: set[_Connection] = set()

    def start(self) -> dict[int, int]:
        """Listen (on free ports); returns broker id -> the proxy's port for it."""
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(timeout=30)
        return self.ports

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{self.host}:{port}" for port in self.ports.values())

    def addresses(self) -> dict[int, tuple[str, int]]:
        return {b: (self.host, port) for b, port in self.ports.items()}

    async def _listen(self) -> None:
        for broker_id in self.brokers:
            server = await asyncio.start_server(
                functools.partial(self._serve, broker_id), self.host, 0
            )
            self._servers.append(server)
            self.ports[broker_id] = server.sockets[0].getsockname()[1]

    def cut_all(self) -> None:
        """Close every connection (the instance behind them was killed)."""
        asyncio.run_coroutine_threadsafe(self._cut_all(), self._loop).result(timeout=30)

    async def _cut_all(self) -> None:
        for connection in list(self._connections):
            connection.close()

    def stop(self) -> None:
        async def stop() -> None:
            for server in self._servers:
                server.close()
            await self._cut_all()

        with contextlib.suppress(RuntimeError, TimeoutError):
            asyncio.run_coroutine_threadsafe(stop(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)

    async def _serve(
        self, broker_id: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        host, port = self.brokers[broker_id]
        try:
            upstream = await asyncio.open_connection(host, port)
        except OSError:
            writer.close()
            return
        connection = _Connection(self, (reader, writer), upstream)
        self._connections.add(connection)
        try:
            await connection.run()
        finally:
            self._connections.discard(connection)
            connection.close()


class _Connection:
    """One client connection and its connection to the broker: requests go up in order,
    answers come back in the same order (Kafka answers a connection's requests in order)."""

    def __init__(
        self,
        proxy: KafkaProxy,
        client: tuple[asyncio.StreamReader, asyncio.StreamWriter],
        broker: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    ) -> None:
        self.proxy = proxy
        self.client = client
        self.broker = broker
        self.pending: deque[tuple[int, int, int, Passage | None]] = deque()

    async def run(self) -> None:
        up = asyncio.ensure_future(self._requests())
        down = asyncio.ensure_future(self._answers())
        try:
            await asyncio.wait([up, down], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (up, down):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    def close(self) -> None:
        for _, writer in (self.client, self.broker):
            writer.close()

    async def _requests(self) -> None:
        reader, _ = self.client
        _, upstream = self.broker
        while (frame := await _read_frame(reader)) is not None:
            api_key, api_version, correlation_id = peek_api(frame)
            passage = None
            step, answered = _durable_step(api_key, frame)
            if step is not None:
                passage = self.proxy.gate.before(step)
                if not passage.go:
                    return
            if answered:
                self.pending.append((correlation_id or 0, api_key, api_version, passage))
            upstream.write(_SIZE.pack(len(frame)) + frame)
            await upstream.drain()

    async def _answers(self) -> None:
        reader, _ = self.broker
        _, client = self.client
        while (frame := await _read_frame(reader)) is not None:
            correlation_id = response_correlation_id(frame)
            while self.pending and self.pending[0][0] != correlation_id:
                self.pending.popleft()  # cannot happen with a Kafka broker; never wedge on it
            if not self.pending:
                return
            _, api_key, api_version, passage = self.pending.popleft()
            if passage is not None and not self.proxy.gate.after(passage):
                return
            if api_key in ADDRESSED:
                frame = _readdressed(api_key, api_version, correlation_id, frame, self.proxy)
            client.write(_SIZE.pack(len(frame)) + frame)
            await client.drain()


async def _read_frame(reader: asyncio.StreamReader) -> bytes | None:
    try:
        head = await reader.readexactly(4)
        size = _SIZE.unpack(head)[0]
        if not 0 <= size <= MAX_FRAME:
            return None
        return await reader.readexactly(size)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None


def _readdressed(
    api_key: int, api_version: int, correlation_id: int, frame: bytes, proxy: KafkaProxy
) -> bytes:
    """The answer with every broker address replaced by the proxy's for that broker."""
    body = decode_response(api_key, api_version, frame)
    rewritten = _rewrite(body, proxy.addresses())
    return encode_response(api_key, api_version, correlation_id, rewritten)[4:]


def _rewrite(entity: Any, addresses: Mapping[int, tuple[str, int]]) -> Any:
    if isinstance(entity, tuple):
        return tuple(_rewrite(e, addresses) for e in entity)
    if not dataclasses.is_dataclass(entity) or isinstance(entity, type):
        return entity
    names = {f.name for f in dataclasses.fields(entity)}
    changes = {
        f.name: _rewrite(getattr(entity, f.name), addresses)
        for f in dataclasses.fields(entity)
        if isinstance(getattr(entity, f.name), tuple)
    }
    node = next((getattr(entity, n) for n in ("node_id", "broker_id") if n in names), None)
    if {"host", "port"} <= names and node is not None and int(node) in addresses:
        host, port = addresses[int(node)]
        port_type = type(getattr(entity, "port"))  # noqa: B009  (a dataclass of some API)
        changes.update(host=host, port=port_type(port))
    return dataclasses.replace(entity, **changes) if changes else entity


def _durable_step(api_key: int, frame: bytes) -> tuple[Step | None, bool]:
    """The step a request is, in the student's words (None if it changes nothing
    durable), and whether the broker answers it (a produce with acks=0 is not answered)."""
    if api_key not in DURABLE:
        return None, True
    body = decode_request(frame).body
    if api_key == PRODUCE:
        topics = sorted(t.name for t in body.topic_data)
        count = sum(_record_count(p.records) for t in body.topic_data for p in t.partition_data)
        # the label is what counts occurrences, so it names no topic: a crash search gives
        # each trial a fresh output topic, and "write to copy-0" never happens in trial 1
        kind = "transactional write" if body.transactional_id else "write"
        records = f"{count} record" + ("" if count == 1 else "s")
        step = Step(kind, f"{records} to {', '.join(topics)}", HEARD_BACK)
        return step, int(body.acks) != 0
    if api_key == OFFSET_COMMIT:
        return Step("consumer.commit()", _offsets(body.topics), HEARD_BACK), True
    if api_key == ADD_OFFSETS_TO_TXN:
        label = "producer.send_offsets_to_transaction() (adding the group to the transaction)"
        return Step(label, f"group {body.group_id}", HEARD_BACK), True
    if api_key == TXN_OFFSET_COMMIT:
        label = "producer.send_offsets_to_transaction() (sending the offsets)"
        return Step(label, _offsets(body.topics), HEARD_BACK), True
    verb = "commit_transaction" if body.committed else "abort_transaction"
    return Step(f"producer.{verb}()", "", HEARD_BACK), True


def _offsets(topics: Any) -> str:
    return ", ".join(
        f"offset {int(p.committed_offset)} of {t.name} partition {int(p.partition_index)}"
        for t in topics
        for p in t.partitions
    )


def _record_count(records: Any) -> int:
    """How many records the batches of a produce request's partition hold."""
    data = bytes(records or b"")
    count, at = 0, 0
    while at + RECORD_COUNT_AT + 4 <= len(data):
        count += _RECORD_COUNT.unpack_from(data, at + RECORD_COUNT_AT)[0]
        at += 12 + _SIZE.unpack_from(data, at + BATCH_LENGTH_AT)[0]
    return count
