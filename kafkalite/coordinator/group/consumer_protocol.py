"""What a classic consumer says about itself when it joins (its subscription), and what
its leader assigned it (``consumer`` groups of the classic protocol).

The coordinator treats member metadata and assignments as opaque bytes, except where
Kafka's coordinator reads them too: OffsetDelete refuses to delete offsets of a topic the
group still consumes; and ``/state`` shows who reads what. Every version of
``ConsumerProtocolSubscription`` and ``ConsumerProtocolAssignment`` starts the same way::

    version  int16
    topics   int32 count, then per topic: int16 length + UTF-8 name
             (an assignment: then int32 count of int32 partitions)
    ...      user data, owned partitions, generation, rack: not needed here
"""

from __future__ import annotations

import struct

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


def subscribed_topics(metadata: bytes) -> set[str]:
    """The topics a consumer's JoinGroup metadata subscribes to (empty if unreadable)."""
    return {topic for topic, _ in _topics(metadata, with_partitions=False)}


def assigned_partitions(assignment: bytes) -> list[tuple[str, int]]:
    """The partitions a classic group's leader assigned a member (empty if unreadable)."""
    return sorted((t, p) for t, ps in _topics(assignment, with_partitions=True) for p in ps)


def _topics(data: bytes, with_partitions: bool) -> list[tuple[str, list[int]]]:
    try:
        (count,) = _INT32.unpack_from(data, _INT16.size)
        position = _INT16.size + _INT32.size
        topics = []
        for _ in range(max(count, 0)):
            (length,) = _INT16.unpack_from(data, position)
            position += _INT16.size
            name = data[position : position + length]
            if length < 0 or len(name) != length:
                return []
            position += length
            partitions: list[int] = []
            if with_partitions:
                (n,) = _INT32.unpack_from(data, position)
                partitions = list(struct.unpack_from(f">{max(n, 0)}i", data, position + 4))
                position += _INT32.size * (1 + max(n, 0))
            topics.append((name.decode(), partitions))
    except (struct.error, UnicodeDecodeError):
        return []
    return topics
