"""What a classic consumer says about itself when it joins (its subscription), and what
its leader assigned it (``consumer`` groups of the classic protocol).

The coordinator treats member metadata and assignments as opaque bytes, except where
Kafka's coordinator reads them too: OffsetDelete refuses to delete offsets of a topic the
group still consumes; and ``/state`` shows who reads what. Every version of
``ConsumerProtocolSubscription`` and ``ConsumerProtocolAssignment`` starts the same way::

    version  int16
    topics   int32 count, then per topic: int16 length + UTF-8 name
             (an assignment: then int32 count of int32 partitions)
    ...      user data, owned partitions (v1+), generation (v2+), rack (v3)

``read_subscription`` and ``write_assignment`` read and write them whole (with kio's
schemas), for classic members inside a consumer group, whose assignment the coordinator
computes itself.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass

from kio.schema.consumer_protocol_assignment.v0 import data as asg_v0
from kio.schema.consumer_protocol_assignment.v1 import data as asg_v1
from kio.schema.consumer_protocol_assignment.v2 import data as asg_v2
from kio.schema.consumer_protocol_assignment.v3 import data as asg_v3
from kio.schema.consumer_protocol_subscription.v0 import data as sub_v0
from kio.schema.consumer_protocol_subscription.v1 import data as sub_v1
from kio.schema.consumer_protocol_subscription.v2 import data as sub_v2
from kio.schema.consumer_protocol_subscription.v3 import data as sub_v3
from kio.schema.types import TopicName
from kio.serial import entity_reader, entity_writer
from kio.serial.errors import SerialError
from kio.static.primitive import i32

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


@dataclass(frozen=True, slots=True)
class Subscription:
    """A classic consumer's JoinGroup metadata, read whole (``ConsumerProtocolSubscription``):
    what a consumer group needs to take the member in (KIP-848's classic members)."""

    version: int
    topics: tuple[str, ...]
    owned_partitions: tuple[tuple[str, tuple[int, ...]], ...]
    """What a cooperative client still holds (v1+); an eager one gave everything up."""
    generation_id: int
    rack_id: str | None


_SUBSCRIPTIONS = {0: sub_v0, 1: sub_v1, 2: sub_v2, 3: sub_v3}
_ASSIGNMENTS = {0: asg_v0, 1: asg_v1, 2: asg_v2, 3: asg_v3}


def read_subscription(metadata: bytes) -> Subscription | None:
    """The whole subscription, read with its version's schema (a newer version with the
    latest known, as Kafka's ``ConsumerProtocol`` does); None if it cannot be read."""
    try:
        (version,) = _INT16.unpack_from(metadata)
        schema = _SUBSCRIPTIONS[min(max(version, 0), max(_SUBSCRIPTIONS))]
        value, _ = entity_reader(schema.ConsumerProtocolSubscription)(metadata, _INT16.size)
    except (SerialError, ValueError, struct.error, IndexError, UnicodeDecodeError):
        return None
    owned = getattr(value, "owned_partitions", ())
    return Subscription(
        version,
        tuple(value.topics),
        tuple((str(tp.topic), tuple(int(p) for p in tp.partitions)) for tp in owned),
        int(getattr(value, "generation_id", -1)),
        getattr(value, "rack_id", None),
    )


def write_assignment(version: int, partitions: dict[str, list[int]]) -> bytes:
    """A ``ConsumerProtocolAssignment`` in the version of the member's subscription (what
    a consumer group's coordinator sends a classic member in SyncGroup)."""
    number = min(max(version, 0), max(_ASSIGNMENTS))
    schema = _ASSIGNMENTS[number]
    out = io.BytesIO()
    out.write(_INT16.pack(number))
    entity_writer(schema.ConsumerProtocolAssignment)(
        out,
        schema.ConsumerProtocolAssignment(
            assigned_partitions=tuple(
                schema.TopicPartition(topic=TopicName(t), partitions=tuple(i32(p) for p in ps))
                for t, ps in sorted(partitions.items())
            ),
            user_data=None,
        ),
    )
    return out.getvalue()
