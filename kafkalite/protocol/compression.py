"""The compression codecs of record batches, as Kafka frames them. No I/O.

A v2 batch names its codec in the low three bits of its attributes; everything after the
61-byte header (the records) is compressed as one block::

    0 none     the records as they are
    1 gzip     a gzip member (RFC 1952)
    2 snappy   Java's xerial framing: 16-byte header, then [int32 length][snappy block]...
               (librdkafka may also send a bare snappy block; both are read)
    3 lz4      an LZ4 frame (Kafka's KIP-57 framing is the standard one)
    4 zstd     a Zstandard frame

The broker only ever needs this to apply a topic's ``compression.type`` (recompressing a
producer's batch) and to look inside a compressed batch for a timestamp.
"""

from __future__ import annotations

import gzip
import struct
from enum import IntEnum

import cramjam


class Codec(IntEnum):
    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


# compression.type's values (``producer`` keeps the producer's codec: no entry)
CODEC_BY_NAME = {
    "uncompressed": Codec.NONE,
    "gzip": Codec.GZIP,
    "snappy": Codec.SNAPPY,
    "lz4": Codec.LZ4,
    "zstd": Codec.ZSTD,
}

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)  # version, compatible version
_XERIAL_BLOCK = 32 * 1024
_INT32 = struct.Struct(">i")


class CompressionError(ValueError):
    """The data does not decompress with the codec its batch names."""


def compress(codec: int, data: bytes) -> bytes:
    match codec:
        case Codec.NONE:
            return data
        case Codec.GZIP:
            return gzip.compress(data, compresslevel=6)
        case Codec.SNAPPY:
            return _xerial_frame(data)
        case Codec.LZ4:
            return bytes(cramjam.lz4.compress(data))
        case Codec.ZSTD:
            return bytes(cramjam.zstd.compress(data))
    raise CompressionError(f"unknown compression codec {codec}")


def decompress(codec: int, data: bytes) -> bytes:
    try:
        match codec:
            case Codec.NONE:
                return data
            case Codec.GZIP:
                return gzip.decompress(data)
            case Codec.SNAPPY:
                return _xerial_unframe(data)
            case Codec.LZ4:
                return bytes(cramjam.lz4.decompress(data))
            case Codec.ZSTD:
                return bytes(cramjam.zstd.decompress(data))
    except (OSError, EOFError, cramjam.DecompressionError) as exc:
        raise CompressionError(f"cannot decompress {Codec(codec).name}: {exc}") from exc
    raise CompressionError(f"unknown compression codec {codec}")


def _xerial_frame(data: bytes) -> bytes:
    out = bytearray(_XERIAL_HEADER)
    for start in range(0, len(data), _XERIAL_BLOCK):
        block = bytes(cramjam.snappy.compress_raw(data[start : start + _XERIAL_BLOCK]))
        out += _INT32.pack(len(block)) + block
    return bytes(out)


def _xerial_unframe(data: bytes) -> bytes:
    if not data.startswith(_XERIAL_MAGIC):
        return bytes(cramjam.snappy.decompress_raw(data))
    out = bytearray()
    pos = len(_XERIAL_HEADER)
    while pos < len(data):
        (size,) = _INT32.unpack_from(data, pos)
        pos += _INT32.size
        if size < 0 or pos + size > len(data):
            raise CompressionError("snappy block runs past the batch")
        out += bytes(cramjam.snappy.decompress_raw(data[pos : pos + size]))
        pos += size
    return bytes(out)
