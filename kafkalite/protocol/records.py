"""Encode and decode the records inside a v2 batch.

Only the broker's own data is decoded here: the internal topics it writes itself
(``__consumer_offsets``, control markers), the one batch a timestamp lookup opens, and the
tests that craft batches by hand. Produced data is never decoded on the hot path (see
``record_batch``); a topic whose ``compression.type`` differs from the producer's codec
gets each batch recompressed whole (``recompress``), records untouched.

Layout of one record inside a batch (varints are zig-zag, like protobuf's sint)::

    length          varint   bytes after this field
    attributes      int8     unused, 0
    timestampDelta  varlong  timestamp minus the batch's baseTimestamp
    offsetDelta     varint   offset minus the batch's baseOffset
    keyLength       varint   -1 for a null key
    key             bytes
    valueLength     varint   -1 for a null value (a tombstone)
    value           bytes
    headersCount    varint
      headerKeyLength varint, headerKey utf-8, headerValueLength varint, headerValue bytes
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import crc32c

from kafkalite.protocol.compression import CompressionError, compress, decompress
from kafkalite.protocol.record_batch import (
    COMPRESSION_MASK,
    CONTROL_FLAG,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC_V2,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG,
    InvalidBatchError,
    parse_header,
)

_HEADER_AFTER_CRC = struct.Struct(">hiqqqhii")
_ATTRIBUTES_AT = 21  # baseOffset 8, batchLength 4, partitionLeaderEpoch 4, magic 1, crc 4
_MAX_TIMESTAMP_AT = 35  # + attributes 2, lastOffsetDelta 4, baseTimestamp 8
_RECORDS_COUNT_AT = 57  # + maxTimestamp 8, producerId 8, producerEpoch 2, baseSequence 4


@dataclass(frozen=True, slots=True)
class Record:
    key: bytes | None
    value: bytes | None
    timestamp: int = 0
    headers: tuple[tuple[str, bytes | None], ...] = field(default_factory=tuple)
    offset: int = -1


def _zigzag_varint(value: int) -> bytes:
    encoded = (value << 1) ^ (value >> 63)
    out = bytearray()
    while encoded & ~0x7F:
        out.append((encoded & 0x7F) | 0x80)
        encoded >>= 7
    out.append(encoded)
    return bytes(out)


def _read_varint(buf: memoryview, pos: int) -> tuple[int, int]:
    shift = 0
    result = 0
    while True:
        if pos >= len(buf):
            raise InvalidBatchError("record ends inside a varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
        if shift > 63:
            raise InvalidBatchError("varint longer than 10 bytes")


def _sized(data: bytes | None) -> bytes:
    if data is None:
        return _zigzag_varint(-1)
    return _zigzag_varint(len(data)) + data


def _encode_record(record: Record, offset_delta: int, base_timestamp: int) -> bytes:
    body = bytearray(b"\x00")
    body += _zigzag_varint(record.timestamp - base_timestamp)
    body += _zigzag_varint(offset_delta)
    body += _sized(record.key)
    body += _sized(record.value)
    body += _zigzag_varint(len(record.headers))
    for name, value in record.headers:
        body += _sized(name.encode())
        body += _sized(value)
    return _zigzag_varint(len(body)) + bytes(body)


def build_batch(
    records: Sequence[Record],
    *,
    base_offset: int = 0,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = -1,
    base_sequence: int = NO_SEQUENCE,
    transactional: bool = False,
    control: bool = False,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
) -> bytes:
    """An uncompressed v2 batch with a correct CRC, as a producer would send it."""
    if not records:
        raise ValueError("a batch needs at least one record")
    base_timestamp = records[0].timestamp
    max_timestamp = max(r.timestamp for r in records)
    body = b"".join(_encode_record(r, i, base_timestamp) for i, r in enumerate(records))
    attributes = (TRANSACTIONAL_FLAG if transactional else 0) | (CONTROL_FLAG if control else 0)
    after_crc = (
        _HEADER_AFTER_CRC.pack(
            attributes,
            len(records) - 1,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            len(records),
        )
        + body
    )
    crc = crc32c.crc32c(after_crc)
    batch_length = HEADER_SIZE - LOG_OVERHEAD + len(body)
    prefix = struct.pack(">qiibI", base_offset, batch_length, partition_leader_epoch, MAGIC_V2, crc)
    return prefix + after_crc


def recompress(batch: bytes | memoryview, codec: int) -> bytes:
    """The same batch with its records compressed by ``codec`` (a topic's
    ``compression.type``): every header field is kept, the length and CRC are redone."""
    header = parse_header(batch, 0)
    end = header.size_in_bytes
    try:
        raw = decompress(header.compression, bytes(batch[HEADER_SIZE:end]))
    except CompressionError as exc:
        raise InvalidBatchError(str(exc)) from exc
    body = compress(codec, raw)
    attributes = (header.attributes & ~COMPRESSION_MASK) | codec
    after_crc = bytearray(batch[_ATTRIBUTES_AT:HEADER_SIZE]) + body
    struct.pack_into(">h", after_crc, 0, attributes)
    crc = crc32c.crc32c(after_crc)
    batch_length = HEADER_SIZE - LOG_OVERHEAD + len(body)
    prefix = struct.pack(
        ">qiibI", header.base_offset, batch_length, header.partition_leader_epoch, MAGIC_V2, crc
    )
    return prefix + bytes(after_crc)


def decode_records(batch: bytes | memoryview, pos: int = 0) -> list[Record]:
    """The records of the batch at ``pos`` (decompressed if need be), with absolute offsets."""
    return [record for record, _ in _records_with_bytes(batch, pos)]


def retain_records(batch: bytes | memoryview, keep: Callable[[Record], bool]) -> bytes | None:
    """The batch with only the records ``keep`` accepts (the log cleaner's rewrite), or None
    when it keeps none. Every header field stays (base offset and last offset delta, so the
    batch still spans its offsets and its producer's sequence range; producer, flags and
    codec): the kept records are copied byte for byte, recompressed if the batch was, and
    the record count, largest timestamp (unless the broker stamped it), length and CRC
    are redone."""
    header = parse_header(batch, 0)
    kept = [(r, raw) for r, raw in _records_with_bytes(batch, 0) if keep(r)]
    if not kept:
        return None
    body = b"".join(raw for _, raw in kept)
    if header.compression:
        body = compress(header.compression, body)
    max_timestamp = header.max_timestamp
    if not header.attributes & TIMESTAMP_TYPE_MASK:  # CreateTime: the records' own
        max_timestamp = max(r.timestamp for r, _ in kept)
    after_crc = bytearray(batch[_ATTRIBUTES_AT:HEADER_SIZE]) + body
    struct.pack_into(">q", after_crc, _MAX_TIMESTAMP_AT - _ATTRIBUTES_AT, max_timestamp)
    struct.pack_into(">i", after_crc, _RECORDS_COUNT_AT - _ATTRIBUTES_AT, len(kept))
    crc = crc32c.crc32c(after_crc)
    prefix = struct.pack(
        ">qiibI",
        header.base_offset,
        HEADER_SIZE - LOG_OVERHEAD + len(body),
        header.partition_leader_epoch,
        MAGIC_V2,
        crc,
    )
    return prefix + bytes(after_crc)


def _records_with_bytes(
    batch: bytes | memoryview, pos: int
) -> Iterator[tuple[Record, bytes | memoryview]]:
    """Each record of the batch at ``pos`` with its encoded bytes (decompressed)."""
    header = parse_header(batch, pos)
    view = memoryview(batch)[pos : pos + header.size_in_bytes]
    if header.compression:
        try:
            raw = decompress(header.compression, bytes(view[HEADER_SIZE:]))
        except CompressionError as exc:
            raise InvalidBatchError(str(exc)) from exc
        view = memoryview(bytes(view[:HEADER_SIZE]) + raw)
    cursor = HEADER_SIZE
    for _ in range(header.records_count):
        start = cursor
        length, cursor = _read_varint(view, cursor)
        end = cursor + length
        cursor += 1  # attributes
        ts_delta, cursor = _read_varint(view, cursor)
        offset_delta, cursor = _read_varint(view, cursor)
        key, cursor = _read_sized(view, cursor)
        value, cursor = _read_sized(view, cursor)
        count, cursor = _read_varint(view, cursor)
        headers: list[tuple[str, bytes | None]] = []
        for _ in range(count):
            name, cursor = _read_sized(view, cursor)
            hvalue, cursor = _read_sized(view, cursor)
            headers.append(((name or b"").decode(), hvalue))
        if cursor != end:
            raise InvalidBatchError("record length does not match its fields")
        record = Record(
            key=key,
            value=value,
            timestamp=header.base_timestamp + ts_delta,
            headers=tuple(headers),
            offset=header.base_offset + offset_delta,
        )
        yield record, view[start:end]


def _read_sized(view: memoryview, pos: int) -> tuple[bytes | None, int]:
    length, pos = _read_varint(view, pos)
    if length < 0:
        return None, pos
    if pos + length > len(view):
        raise InvalidBatchError("record field runs past the batch")
    return bytes(view[pos : pos + length]), pos + length
