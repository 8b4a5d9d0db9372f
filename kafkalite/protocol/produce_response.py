"""The Produce response, encoded by hand for the usual answer.

Every produced batch is answered, so this is the most frequent response a broker writes;
kio builds a frozen dataclass per partition, validates every field's type on the way in
and walks the tree field by field on the way out, which cost more than the append itself.
This encoder writes the same bytes with a few ``struct`` calls. It covers the usual
answer: no partition names a new leader (``current_leader``, KIP-951) and no broker
endpoints are listed; a response that needs those is built with kio by the handler. A
property test checks that it produces exactly kio's bytes for every version served.

Layout (Kafka's ``ProduceResponse.json``; v9 and later are flexible: compact arrays and
strings as unsigned varints of length + 1, a tagged-field section after each struct)::

    size                       int32   (the frame's)
    correlation_id             int32   header v0; v1 (flexible) adds a tagged-field section
    responses                  [topic]
      name                     string
      partition_responses      [partition]
        index                  int32
        error_code             int16
        base_offset            int64
        log_append_time_ms     int64   -1 unless the topic uses LogAppendTime
        log_start_offset       int64   v5+
        record_errors          [..]    v8+: always empty here
        error_message          nullable string  v8+
    throttle_time_ms           int32
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Protocol

from kafkalite.protocol.primitives import I32, array_length, string

FLEXIBLE_VERSION = 9
MIN_VERSION, MAX_VERSION = 3, 12

_PARTITION_V5 = struct.Struct(">ihqqq")
_PARTITION_V3 = struct.Struct(">ihqq")


class PartitionResult(Protocol):
    """One partition's answer, as the replica manager gives it."""

    @property
    def error(self) -> int: ...
    @property
    def base_offset(self) -> int: ...
    @property
    def log_append_time_ms(self) -> int: ...
    @property
    def log_start_offset(self) -> int: ...
    @property
    def message(self) -> str | None: ...


ProduceTopic = tuple[str, Sequence[tuple[int, PartitionResult]]]
"""A topic's name and its partitions' ``(index, answer)``."""


def encode_produce_response(
    version: int, correlation_id: int, topics: Sequence[ProduceTopic], throttle_time_ms: int = 0
) -> bytes:
    """The whole frame, size prefix included."""
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise ValueError(f"Produce v{version} is not encoded here")
    flexible = version >= FLEXIBLE_VERSION
    head = _PARTITION_V5 if version >= 5 else _PARTITION_V3
    out = bytearray(I32.pack(0) + I32.pack(correlation_id))
    if flexible:
        out += b"\x00"
    out += array_length(len(topics), flexible)
    for name, partitions in topics:
        out += string(name, flexible)
        out += array_length(len(partitions), flexible)
        for index, r in partitions:
            values = (index, r.error, r.base_offset, r.log_append_time_ms, r.log_start_offset)
            out += head.pack(*values[: 5 if version >= 5 else 4])
            if version >= 8:
                out += b"\x01" if flexible else b"\x00\x00\x00\x00"  # no record errors
                out += string(r.message, flexible)
            if flexible:
                out += b"\x00"
        if flexible:
            out += b"\x00"
    out += I32.pack(throttle_time_ms)
    if flexible:
        out += b"\x00"
    I32.pack_into(out, 0, len(out) - 4)
    return bytes(out)
