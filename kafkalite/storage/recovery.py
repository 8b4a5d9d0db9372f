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
    validate_batch,
)
from kafkalite.storage.segment import LogSegment

log = logging.getLogger(__name__)


def valid_prefix(data: bytes, base_offset: int) -> int:
    """Length of the longest prefix of ``data`` made of valid, forward-moving batches."""
    pos = 0
    next_offset = base_offset
    while len(data) - pos >= LOG_OVERHEAD:
        try:
            header = validate_batch(data, pos)
        except InvalidBatchError as exc:
            log.warning("recovery: invalid batch at position %d: %s", pos, exc)
            return pos
        if header.base_offset < next_offset:
            log.warning(
                "recovery: batch at position %d goes back to offset %d", pos, header.base_offset
            )
            return pos
        next_offset = header.next_offset
        pos += header.size_in_bytes
    return pos


def recover_segment(segment: LogSegment, index_interval_bytes: int) -> int:
    """Validate the whole segment, truncate a bad tail, rebuild the index; bytes cut."""
    data = segment.read_bytes(0, segment.size)
    keep = valid_prefix(data, segment.base_offset)
    cut = segment.size - keep
    if cut:
        segment.truncate_to_position(keep, index_interval_bytes)
    else:
        segment.load(index_interval_bytes)
    return cut
