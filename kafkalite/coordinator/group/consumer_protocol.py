"""What a consumer says about itself when it joins: its subscription (``consumer`` groups).

The coordinator treats member metadata as opaque bytes, except where Kafka's coordinator
reads it too: OffsetDelete refuses to delete offsets of a topic the group still consumes.
Every version of ``ConsumerProtocolSubscription`` starts the same way::

    version  int16
    topics   int32 count, then per topic: int16 length + UTF-8 name
    ...      user data, owned partitions, generation, rack (versions 1-3): not needed here
"""

from __future__ import annotations

import struct

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


def subscribed_topics(metadata: bytes) -> set[str]:
    """The topics a consumer's JoinGroup metadata subscribes to (empty if unreadable)."""
    try:
        (count,) = _INT32.unpack_from(metadata, _INT16.size)
        position = _INT16.size + _INT32.size
        topics = set()
        for _ in range(max(count, 0)):
            (length,) = _INT16.unpack_from(metadata, position)
            position += _INT16.size
            name = metadata[position : position + length]
            if length < 0 or len(name) != length:
                return set()
            topics.add(name.decode())
            position += length
    except (struct.error, UnicodeDecodeError):
        return set()
    return topics
