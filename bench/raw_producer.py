"""A producer that encodes nothing per request: one pre-encoded batch of 1 KiB records,
resent. What brokers absorb when the client is not what limits the rate (on two cores
librdkafka's CPU is about half of what a produced MB costs), as ``bench.consume``'s raw
reader is for reads. Used by ``bench.throughput`` (one broker) and ``bench.replication``
(RF 3, acks=all)."""

from __future__ import annotations

import socket
import struct
import time

from bench.requests import produce_frame
from kafkalite.protocol.codec import decode_response
from kafkalite.protocol.records import Record, build_batch

RECORD = b"x" * 1024

RAW_IN_FLIGHT = 16
"""The raw producer's requests in flight: enough that the broker always has the next one
read (1 MiB; it reads 128 KiB ahead), as ``bench.throughput.PRODUCER`` has: librdkafka's default
``max.in.flight.requests.per.connection`` is 1,000,000 when not idempotent. With five, the
raw producer waited for each answer in turn and the broker for it (2026-11-30 02:18, load
1.4: 269-328 MB/s at five, 339-356 at twenty)."""
RAW_BATCH_RECORDS = 63
"""1 KiB records in the raw producer's one batch, uncompressed: as full as ``PRODUCER``'s
64 KiB batches get."""


def raw_produce(
    address: str,
    topic: str,
    count: int,
    partition: int = 0,
    acks: int = 1,
    batch_records: int = RAW_BATCH_RECORDS,
) -> float:
    """Seconds to produce ``count`` 1 KiB records (whole batches of ``batch_records``) to
    ``topic``'s ``partition``, led by the broker at ``address`` (``host:port``), as one
    batch resent with ``RAW_IN_FLIGHT`` requests in flight. Every answer is decoded and
    must carry no error."""
    now_ms = int(time.time() * 1000)
    batch = build_batch([Record(None, RECORD, now_ms) for _ in range(batch_records)])
    frame = produce_frame(topic, partition, acks, batch)
    host, port = address.rsplit(":", 1)
    requests, sent, answered = count // batch_records, 0, 0
    with socket.create_connection((host, int(port))) as sock, sock.makefile("rb") as answers:
        start = time.perf_counter()
        while answered < requests:
            while sent < requests and sent - answered < RAW_IN_FLIGHT:
                sock.sendall(frame)
                sent += 1
            size = struct.unpack(">i", answers.read(4))[0]
            response = decode_response(0, 10, answers.read(size))
            error = response.responses[0].partition_responses[0].error_code
            if error:
                raise RuntimeError(f"raw produce refused: error {error}")
            answered += 1
        return time.perf_counter() - start
