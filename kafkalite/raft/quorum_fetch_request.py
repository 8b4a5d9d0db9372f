"""A voter's Fetch request (Fetch v15) read by hand, straight into the Raft core's message.

The quorum leader answers a Fetch from each voter every few milliseconds at most, and
reading one through kio (a header object and the request's tree of five phantom-typed
objects) then ``wire.decode`` (the tree to ``raft.messages.FetchRequest``) cost more than
answering it. Issue 29 allows a hand path for Fetch only; kio stays the reference:
``tests/unit/raft/test_quorum_fetch_request.py`` checks, for random requests of the
version, that this reads exactly what kio and ``wire.decode`` read.

Only the shape a voter sends is read here: one topic with one partition, nothing
forgotten, no tagged field but the request's ``ClusterId`` (0) and ``ReplicaState`` (1).
Anything else (and anything that does not parse) gives ``None``, and kio reads it, with
kio's errors. The frame, without its size, in header v2 then the body::

    api_key int16 | api_version int16 | correlation_id int32
    client_id: int16 length + UTF-8 (-1: null) | header tagged fields (count 0)
    max_wait_ms int32 | min_bytes int32 | max_bytes int32 | isolation_level int8
    session_id int32 | session_epoch int32
    topics: uvarint 1+1 | topic_id 16 bytes | partitions: uvarint 1+1
        partition int32 | current_leader_epoch int32 | fetch_offset int64
        last_fetched_epoch int32 | log_start_offset int64 | partition_max_bytes int32
        partition tagged fields (count 0) | topic tagged fields (count 0)
    forgotten_topics_data: uvarint 0+1
    rack_id: uvarint length+1 + UTF-8
    tagged fields: uvarint count, then each (uvarint tag, uvarint size, bytes):
        0 ClusterId: uvarint length+1 + UTF-8 (0: null)
        1 ReplicaState: replica_id int32 | replica_epoch int64 | tagged fields (count 0)
"""

from __future__ import annotations

import struct

from kafkalite.protocol.codec import Request
from kafkalite.protocol.framing import ReceivedFrame
from kafkalite.protocol.primitives import read_uvarint
from kafkalite.raft import messages as m

FETCH_KEY = 1
QUORUM_FETCH_VERSION = 15
_HEADER = struct.Struct(">hhih")
_WAIT_TO_SESSION = struct.Struct(">iiibii")
_PARTITION = struct.Struct(">iiqiqi")
_REPLICA_STATE = struct.Struct(">iq")
_REPLICA_STATE_SIZE = _REPLICA_STATE.size + 1  # and its empty tagged-field section


class _Unread(Exception):
    """Not the shape read here, or not parseable: kio reads it instead."""


def decode_quorum_fetch(frame: ReceivedFrame) -> Request | None:
    """The request in ``frame`` (without its size prefix) with a ``raft.messages
    .FetchRequest`` as its body, or ``None`` when kio must read it (a frame big enough
    to be read into a buffer of its own is no voter's Fetch)."""
    if not isinstance(frame, bytes):
        return None
    try:
        return _decode(frame)
    except (_Unread, struct.error, IndexError, ValueError):  # UnicodeDecodeError among them
        return None


def _decode(frame: bytes) -> Request:
    api_key, api_version, correlation_id, client_id_size = _HEADER.unpack_from(frame, 0)
    if api_key != FETCH_KEY or api_version != QUORUM_FETCH_VERSION:
        raise _Unread
    position = _HEADER.size
    client_id = None
    if client_id_size >= 0:
        end = position + client_id_size
        if end > len(frame):
            raise _Unread
        client_id = frame[position:end].decode()
        position = end
    if frame[position] != 0:  # the header's tagged fields: none
        raise _Unread
    max_wait_ms = _WAIT_TO_SESSION.unpack_from(frame, position + 1)[0]
    position += 1 + _WAIT_TO_SESSION.size
    if frame[position] != 2 or frame[position + 17] != 2:  # one topic, one partition
        raise _Unread
    position += 18  # the count, the topic id, the partition count
    partition = _PARTITION.unpack_from(frame, position)
    position += _PARTITION.size
    if frame[position : position + 3] != b"\0\0\1":  # tags, tags, no forgotten topic
        raise _Unread
    position = _skip_string(frame, position + 3, nullable=False)  # rack_id
    replica_id, end = _tagged_replica_id(frame, position)
    _, current_leader_epoch, fetch_offset, last_fetched_epoch, log_start_offset, _ = partition
    message = m.FetchRequest(
        replica_id,
        current_leader_epoch,
        fetch_offset,
        last_fetched_epoch,
        log_start_offset,
        max_wait_ms,
    )
    trailing = len(frame) - end
    return Request(FETCH_KEY, QUORUM_FETCH_VERSION, correlation_id, client_id, message, trailing)


def _tagged_replica_id(frame: bytes, position: int) -> tuple[int, int]:
    """The body's tagged fields: the replica id of ``ReplicaState`` (-1 without it), and
    where they end."""
    count, position = read_uvarint(frame, position)
    replica_id = -1
    last_tag = -1
    for _ in range(count):
        tag, position = read_uvarint(frame, position)
        size, position = read_uvarint(frame, position)
        end = position + size
        if tag <= last_tag or end > len(frame):
            raise _Unread
        last_tag = tag
        if tag == 0:
            if _skip_string(frame, position, nullable=True) != end:
                raise _Unread
        elif tag == 1:
            if size != _REPLICA_STATE_SIZE or frame[end - 1] != 0:
                raise _Unread
            replica_id = _REPLICA_STATE.unpack_from(frame, position)[0]
        else:
            raise _Unread
        position = end
    return replica_id, position


def _skip_string(frame: bytes, position: int, *, nullable: bool) -> int:
    """Past a compact string at ``position`` (checked to be UTF-8, as kio checks)."""
    length, position = read_uvarint(frame, position)
    if length == 0:
        if not nullable:
            raise _Unread
        return position
    end = position + length - 1
    if end > len(frame):
        raise _Unread
    frame[position:end].decode()
    return end
