"""Finding offsets by timestamp (ListOffsets): the only reads that decode records.

Batch headers carry each batch's largest timestamp, and a segment knows its own, so
whole segments and batches are skipped by header; only the batch that holds the answer is
decoded to find the record inside it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkalite.protocol.record_batch import RecordBatchHeader
from kafkalite.protocol.records import decode_records
from kafkalite.storage.segment import LogSegment

if TYPE_CHECKING:
    from kafkalite.storage.log import Log


def offset_for_timestamp(plog: Log, timestamp: int) -> tuple[int, int] | None:
    """``(offset, timestamp)`` of the first record with a timestamp >= ``timestamp``."""
    for segment in plog.segments:
        if segment.max_timestamp < timestamp:
            continue
        for pos, header in segment.scan(0):
            if header.max_timestamp < timestamp or header.last_offset < plog.log_start_offset:
                continue
            batch = segment.read_bytes(pos, header.size_in_bytes)
            for record in decode_records(batch):
                if record.timestamp >= timestamp and record.offset >= plog.log_start_offset:
                    return record.offset, record.timestamp
    return None


def max_timestamp_offset(plog: Log, max_offset: int) -> tuple[int, int] | None:
    """The first record with the largest timestamp in the batches that start below
    ``max_offset`` (ListOffsets -3): batch headers find the batch, then only that batch
    is decoded."""
    best: tuple[LogSegment, int, RecordBatchHeader] | None = None
    for segment in plog.segments:
        for pos, header in segment.scan(0):
            if header.last_offset < plog.log_start_offset or header.is_control:
                continue
            if header.base_offset >= max_offset:
                break
            if best is None or header.max_timestamp > best[2].max_timestamp:
                best = (segment, pos, header)
    if best is None:
        return None
    segment, pos, header = best
    for record in decode_records(segment.read_bytes(pos, header.size_in_bytes)):
        if record.timestamp == header.max_timestamp:
            return record.offset, record.timestamp
    return header.base_offset, header.max_timestamp  # LogAppendTime: the batch's time
