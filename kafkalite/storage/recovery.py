"""Recovery after an unclean stop: keep the longest valid prefix of a segment.

A ``kill -9`` can leave the last batch half-written (a torn tail). Every batch past the
recovery point is checked again (header, length, CRC32C, offsets moving forward); the
first one that fails and everything after it are cut off. Only whole, intact batches
were ever acknowledged, so nothing acknowledged is lost.
"""

from __future__ import annotations

import logging

from kafkalite.protocol.record_batch import (
    LOG_OVERHEAD,
    InvalidBatchError,
    read_offset_and_length,
    validate_batch,
)
from kafkalite.storage.segment import LogSegment

log = logging.getLogger(__name__)


RECOVERY_CHUNK = 1 << 20


def valid_prefix(segment: LogSegment) -> int:
    """Length of the longest prefix of the segment made of valid, forward-moving batches.

    Read in chunks of ``RECOVERY_CHUNK`` (a batch larger than that is read whole), so a
    gigabyte segment is never in memory at once."""
    pos = 0
    next_offset = segment.base_offset
    while True:
        chunk = segment.read_bytes(pos, RECOVERY_CHUNK)
        if len(chunk) >= LOG_OVERHEAD:
            _, size = read_offset_and_length(chunk, 0)
            if len(chunk) < size <= segment.size - pos:
                chunk = segment.read_bytes(pos, size)  # one batch larger than a chunk
        cursor = 0
        while len(chunk) - cursor >= LOG_OVERHEAD:
            _, size = read_offset_and_length(chunk, cursor)
            if size > len(chunk) - cursor and cursor > 0:
                break  # continues in the next chunk
            try:
                header = validate_batch(chunk, cursor)
            except InvalidBatchError as exc:
                log.warning("recovery: invalid batch at position %d: %s", pos + cursor, exc)
                return pos + cursor
            if header.base_offset < next_offset:
                log.warning(
                    "recovery: batch at position %d goes back to offset %d",
                    pos + cursor,
                    header.base_offset,
                )
                return pos + cursor
            next_offset = header.next_offset
            cursor += header.size_in_bytes
        if cursor == 0:
            return pos  # a torn tail shorter than a batch header, or nothing left
        pos += cursor


def recover_segment(segment: LogSegment, index_interval_bytes: int) -> int:
    """Validate the whole segment, truncate a bad tail, rebuild the index; bytes cut."""
    keep = valid_prefix(segment)
    cut = segment.size - keep
    if cut:
        segment.truncate_to_position(keep, index_interval_bytes)
    else:
        segment.load(index_interval_bytes)
    return cut
