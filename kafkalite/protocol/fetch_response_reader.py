"""A follower's Fetch responses (v12, what the replica fetcher asks in) read by hand, into
kio's classes, with each partition's records a view of the frame instead of a copy.

kio reads every partition's records into a new ``bytes``: a copy of each replicated MB on
its way from the leader's answer to the follower's log. Here they are a slice of the
buffer the answer was read into (``protocol.framing``), which the follower checks and
writes to its segment file. Every other field is what kio reads. A response with a tagged
field (a diverging epoch, a current leader, a snapshot id: answers that are no plain
batch of records) or of any shape not read here is left to kio: ``None``.

The response, without its size prefix (header v1)::

    correlation_id int32, tagged fields (none)
    throttle_time_ms int32, error_code int16, session_id int32
    responses: compact array of
        topic compact string
        partitions: compact array of
            partition_index int32, error_code int16, high_watermark int64,
            last_stable_offset int64, log_start_offset int64,
            aborted_transactions: compact nullable array of
                producer_id int64, first_offset int64, tagged fields (none)
            preferred_read_replica int32, records compact nullable bytes,
            tagged fields (none)
        tagged fields (none)
    tagged fields (none)

Checked against kio for random responses (``tests/unit/protocol/test_fetch_response_reader.py``).
"""

from __future__ import annotations

import datetime
import struct
from typing import Any

from kio.schema.errors import ErrorCode
from kio.schema.fetch.v12 import response as fetch_v12

from kafkalite.protocol.frame_reader import INT32, FrameReader, read_by_hand
from kafkalite.protocol.framing import ReceivedFrame

VERSION = 12
schema: Any = fetch_v12
"""kio's classes, filled here with a view where their types say ``bytes`` (records)."""
_CORRELATION_ID = 4
_TOP = struct.Struct(">ihi")  # throttle_time_ms, error_code, session_id
_PARTITION = struct.Struct(">ihqqq")
"""partition_index, error_code, high_watermark, last_stable_offset, log_start_offset"""
_ABORTED = struct.Struct(">qq")  # producer_id, first_offset


def read_fetch_response(frame: ReceivedFrame) -> Any | None:
    """The Fetch v12 response body in ``frame`` (without its size prefix), or ``None``
    when kio must read it (``read_by_hand``)."""
    return read_by_hand(_read, frame)


def _read(frame: bytearray) -> Any:
    reader = FrameReader(frame, _CORRELATION_ID, flexible=True)
    reader.no_tags()
    throttle_ms, error_code, session_id = reader.fixed(_TOP)
    topics: list[Any] = []
    for _ in range(reader.count()):
        topic = reader.string(nullable=False)
        partitions: list[Any] = []
        for _ in range(reader.count()):
            index, error, high_watermark, last_stable, log_start = reader.fixed(_PARTITION)
            aborted = _aborted_transactions(reader)
            (preferred_read_replica,) = reader.fixed(INT32)
            records = reader.records()
            reader.no_tags()
            partitions.append(
                schema.PartitionData(
                    partition_index=index,
                    error_code=ErrorCode(error),
                    high_watermark=high_watermark,
                    last_stable_offset=last_stable,
                    log_start_offset=log_start,
                    aborted_transactions=aborted,
                    preferred_read_replica=preferred_read_replica,
                    records=records,
                )
            )
        reader.no_tags()
        topics.append(schema.FetchableTopicResponse(topic=topic, partitions=tuple(partitions)))
    reader.no_tags()  # what follows, if anything, is ignored, as ``decode_response`` does
    return schema.FetchResponse(
        throttle_time=datetime.timedelta(milliseconds=throttle_ms),
        error_code=ErrorCode(error_code),
        session_id=session_id,
        responses=tuple(topics),
    )


def _aborted_transactions(reader: FrameReader) -> tuple[Any, ...] | None:
    count = reader.count(nullable=True)
    if count < 0:
        return None
    aborted = []
    for _ in range(count):
        producer_id, first_offset = reader.fixed(_ABORTED)
        reader.no_tags()
        aborted.append(
            schema.AbortedTransaction(producer_id=producer_id, first_offset=first_offset)
        )
    return tuple(aborted)
