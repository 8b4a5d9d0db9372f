"""Which partition of a coordinator's internal topic owns a key (a group id, a
transactional id): ``abs(java_hash(key)) % partitions``, exactly as Kafka computes it, so
the same key always lands on the same coordinator, whichever broker is asked."""

from __future__ import annotations

import struct
from functools import lru_cache


@lru_cache(maxsize=4096)
def java_string_hash(value: str) -> int:
    """Java's ``String.hashCode`` over UTF-16 code units, as a signed 32-bit int. Kept
    for the keys seen last: every Heartbeat, commit and fetch of offsets asks it for its
    group id, and a class has few."""
    data = value.encode("utf-16-be")
    h = 0
    for unit in struct.unpack(f">{len(data) // 2}H", data):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for(key: str, partitions: int) -> int:
    h = java_string_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions
