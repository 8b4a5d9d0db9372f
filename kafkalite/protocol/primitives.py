"""The Kafka protocol's primitive types, for the responses encoded by hand
(``fetch_response``, ``produce_response``): big-endian integers, and in flexible versions
lengths as unsigned varints of length + 1 (0 meaning null)."""

from __future__ import annotations

import struct

I16 = struct.Struct(">h")
I32 = struct.Struct(">i")
EMPTY_TAGS = b"\x00"
"""A tagged-field section with no field: what ends every struct of a flexible version."""


_ONE_BYTE = [bytes((n,)) for n in range(0x80)]


def uvarint(value: int) -> bytes:
    if 0 <= value < 0x80:  # most counts and lengths: no loop, no new bytes
        return _ONE_BYTE[value]
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_uvarint(data: bytes | bytearray | memoryview, position: int) -> tuple[int, int]:
    """The unsigned varint at ``position`` (at most five bytes: a length or a count) and
    the position after it; ``IndexError`` if ``data`` ends inside it."""
    value = shift = 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7
        if shift > 28:
            raise ValueError("unsigned varint longer than 5 bytes")


def array_length(n: int, flexible: bool) -> bytes:
    return uvarint(n + 1) if flexible else I32.pack(n)


def string(value: str | None, flexible: bool) -> bytes:
    """A (nullable) string: compact in flexible versions, int16-length before."""
    if value is None:
        return b"\x00" if flexible else b"\xff\xff"
    encoded = value.encode()
    return (uvarint(len(encoded) + 1) if flexible else I16.pack(len(encoded))) + encoded
