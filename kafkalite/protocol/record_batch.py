"""Record batch v2 (magic 2) header access: the broker's whole view of produced data.

The broker never decodes records on the hot path. A produced batch is validated by its
61-byte header and its CRC32C, and then stored and served as the very bytes the producer
sent, after two header fields are patched: ``baseOffset`` (the broker assigns offsets) and
``partitionLeaderEpoch`` (the leader stamps its epoch). Neither field is covered by the
CRC, which is exactly why Kafka put them in front of it.

Byte layout of one batch (big-endian)::

    offset  size  field
    0       8     baseOffset            first offset in the batch     (patched by the leader)
    8       4     batchLength           bytes after this field, so the batch is 12 + batchLength
    12      4     partitionLeaderEpoch  epoch of the leader that appended it (patched)
    16      1     magic                 always 2
    17      4     crc                   CRC32C (Castagnoli) of bytes 21..end
    21      2     attributes            bits 0-2 compression, 3 timestamp type,
                                        4 transactional, 5 control, 6 delete horizon
    23      4     lastOffsetDelta       last offset minus baseOffset
    27      8     baseTimestamp
    35      8     maxTimestamp
    43      8     producerId            -1 when not idempotent
    51      2     producerEpoch
    53      4     baseSequence          sequence of the first record, -1 when not idempotent
    57      4     recordsCount
    61      ...   records               possibly compressed; opaque to the broker

A produce request's ``records`` field may hold several batches back to back.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

import crc32c

HEADER_SIZE = 61
LOG_OVERHEAD = 12  # baseOffset + batchLength: the part not counted in batchLength
MAGIC_V2 = 2
NO_PRODUCER_ID = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG = 0x10
CONTROL_FLAG = 0x20

_HEADER = struct.Struct(">qiibIhiqqqhii")
_OFFSET_AND_LENGTH = struct.Struct(">qi")
_INT64 = struct.Struct(">q")
_INT32 = struct.Struct(">i")


class InvalidBatchError(ValueError):
    """The bytes are not a well-formed v2 record batch (Kafka: CORRUPT_MESSAGE)."""


class UnsupportedMagicError(InvalidBatchError):
    """A batch with magic 0 or 1: Kafka-Lite stores only v2 batches."""


class MoreThanOneBatchError(InvalidBatchError):
    """A Produce request (v3+) with more than one batch for a partition (Kafka:
    INVALID_RECORD): idempotence is checked per batch, so Kafka allows exactly one."""


@dataclass(slots=True)
class RecordBatchHeader:
    """The 61 header bytes of one batch, decoded. Records stay opaque. Not frozen: one is
    made per batch read or produced, and a frozen one's ``__init__`` sets its thirteen
    fields through ``object.__setattr__`` (a twentieth of a small Produce's leader CPU);
    nothing changes one."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size_in_bytes(self) -> int:
        return LOG_OVERHEAD + self.batch_length

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def last_sequence(self) -> int:
        """Sequence of the last record; sequences wrap at 2**31 like Kafka's."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) % (1 << 31)

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG)

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id >= 0


def parse_header(buf: bytes | bytearray | memoryview, pos: int = 0) -> RecordBatchHeader:
    """Decode the header at ``pos``; raises InvalidBatchError when it cannot be one."""
    if len(buf) - pos < HEADER_SIZE:
        raise InvalidBatchError(f"batch header needs {HEADER_SIZE} bytes, {len(buf) - pos} left")
    header = RecordBatchHeader(*_HEADER.unpack_from(buf, pos))
    if header.magic != MAGIC_V2:
        raise UnsupportedMagicError(f"record batch magic {header.magic}; only v2 is supported")
    if header.batch_length < HEADER_SIZE - LOG_OVERHEAD:
        raise InvalidBatchError(f"batchLength {header.batch_length} is shorter than a header")
    return header


def crc_of(buf: bytes | memoryview, pos: int, header: RecordBatchHeader) -> int:
    """CRC32C over attributes..end, the span the ``crc`` field covers."""
    return int(crc32c.crc32c(memoryview(buf)[pos + 21 : pos + header.size_in_bytes]))


def validate_batch(buf: bytes | memoryview, pos: int = 0) -> RecordBatchHeader:
    """Check that the batch at ``pos`` is whole and intact (its size and CRC), as Kafka's
    ``DefaultRecordBatch.ensureValid`` does for every batch it appends, replicates or
    recovers. Not its record count: a batch the log cleaner thinned keeps its offset range
    with fewer records (``retain_records``), so only a batch a client produced must have
    one record per offset (``validate_produced``)."""
    return _whole_and_intact(buf, pos, parse_header(buf, pos))


def _whole_and_intact(
    buf: bytes | memoryview, pos: int, header: RecordBatchHeader
) -> RecordBatchHeader:
    if len(buf) - pos < header.size_in_bytes:
        raise InvalidBatchError(
            f"batch declares {header.size_in_bytes} bytes but only {len(buf) - pos} are present"
        )
    actual = crc_of(buf, pos, header)
    if actual != header.crc:
        raise InvalidBatchError(f"CRC32C mismatch: header says {header.crc}, data has {actual}")
    return header


def iter_batches(buf: bytes | memoryview) -> Iterator[tuple[int, RecordBatchHeader]]:
    """Yield ``(position, header)`` of each complete batch; stop at a partial trailing batch.

    Used on data that was already validated (the log, a fetch response): a partial tail is
    normal there (fetch responses may cut the last batch), so it ends iteration silently.
    """
    pos = 0
    end = len(buf)
    while end - pos >= HEADER_SIZE:
        header = parse_header(buf, pos)
        if end - pos < header.size_in_bytes:
            return
        yield pos, header
        pos += header.size_in_bytes


def validate_produced(records: bytes | memoryview) -> RecordBatchHeader:
    """The one batch a Produce request (v3+) carries for a partition, whole and intact.

    As Kafka's ``ProduceRequest.validateRecords``, the number of batches is checked before
    their contents: more than one is ``MoreThanOneBatchError`` even if one is corrupt.
    """
    if not records:
        raise InvalidBatchError("produce request carries no record batch")
    header = parse_header(records, 0)
    if len(records) > header.size_in_bytes:
        raise MoreThanOneBatchError(
            "Produce requests v3+ may carry exactly one record batch per partition; "
            f"this one has {len(records) - header.size_in_bytes} bytes after the first"
        )
    if header.records_count < 1:
        raise InvalidBatchError(f"batch has {header.records_count} records")
    # Kafka's LogValidator.validateBatch, for batches from clients only
    if header.last_offset_delta != header.records_count - 1:
        raise InvalidBatchError(
            f"lastOffsetDelta {header.last_offset_delta} does not match "
            f"recordsCount {header.records_count}"
        )
    return _whole_and_intact(records, 0, header)  # its header parsed once


def stamp(
    batch: bytearray | memoryview, pos: int, base_offset: int, partition_leader_epoch: int
) -> None:
    """Patch the two fields the CRC does not cover, in place."""
    _INT64.pack_into(batch, pos, base_offset)
    _INT32.pack_into(batch, pos + 12, partition_leader_epoch)


def read_offset_and_length(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """``(baseOffset, whole batch size)`` without decoding the rest: log scans use this."""
    base_offset, batch_length = _OFFSET_AND_LENGTH.unpack_from(buf, pos)
    return int(base_offset), LOG_OVERHEAD + int(batch_length)
