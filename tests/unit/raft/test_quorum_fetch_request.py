"""The quorum Fetch request read by hand reads exactly what kio (and ``wire.decode``)
reads: for random Fetch v15 requests of every shape, for their bytes cut short or
altered, and for the frames a voter really sends."""

from __future__ import annotations

import dataclasses
import datetime
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kio.schema.fetch.v15 import request as fetch_req

from kafkalite.protocol.codec import (
    MalformedRequestError,
    UnsupportedApiError,
    build,
    decode_request,
    encode_request,
)
from kafkalite.raft import messages as m
from kafkalite.raft import wire
from kafkalite.raft.quorum_fetch_request import decode_quorum_fetch

pytestmark = pytest.mark.unit

i8 = st.integers(-(2**7), 2**7 - 1)
i32 = st.integers(-(2**31), 2**31 - 1)
i64 = st.integers(-(2**63), 2**63 - 1)
text = st.text(max_size=12)

partitions = st.builds(
    fetch_req.FetchPartition,
    partition=i32,
    current_leader_epoch=i32,
    fetch_offset=i64,
    last_fetched_epoch=i32,
    log_start_offset=i64,
    partition_max_bytes=i32,
)
topics = st.builds(
    fetch_req.FetchTopic,
    topic_id=st.sampled_from([wire.METADATA_TOPIC_ID]) | st.uuids(),
    partitions=st.lists(partitions, max_size=2).map(tuple),
)
forgotten = st.builds(
    fetch_req.ForgottenTopic,
    topic_id=st.uuids(),
    partitions=st.lists(i32, max_size=2).map(tuple),
)


@st.composite
def requests(draw: st.DrawFn, quorum_shape: bool) -> fetch_req.FetchRequest:
    """Any v15 Fetch request, or (``quorum_shape``) one of the shape a voter sends: one
    topic with one partition, nothing forgotten."""
    values = {
        "cluster_id": draw(st.none() | text),
        "replica_state": draw(
            st.just(fetch_req.ReplicaState())
            | st.builds(fetch_req.ReplicaState, replica_id=i32, replica_epoch=i64)
        ),
        "max_wait": datetime.timedelta(milliseconds=draw(i32)),
        "min_bytes": draw(i32),
        "max_bytes": draw(i32),
        "isolation_level": draw(i8),
        "session_id": draw(i32),
        "session_epoch": draw(i32),
        "topics": (
            (draw(topics.filter(lambda t: len(t.partitions) == 1)),)
            if quorum_shape
            else tuple(draw(st.lists(topics, max_size=2)))
        ),
        "forgotten_topics_data": ()
        if quorum_shape
        else tuple(draw(st.lists(forgotten, max_size=1))),
        "rack_id": draw(text),
    }
    return build(fetch_req.FetchRequest, values)  # type: ignore[no-any-return]


def frame_of(request: fetch_req.FetchRequest, correlation_id: int, client_id: str) -> bytes:
    return encode_request(request, correlation_id, client_id)[4:]


def read_alike(frame: bytes) -> bool:
    """Whether the hand path read ``frame``; when it did, it read what kio reads."""
    by_hand = decode_quorum_fetch(frame)
    if by_hand is None:
        return False
    by_kio = decode_request(frame)  # must not fail where the hand path read
    assert by_hand == dataclasses.replace(by_kio, body=wire.decode(by_kio.body))
    return True


@given(request=requests(quorum_shape=True), correlation_id=i32, client_id=text)
@settings(max_examples=100, deadline=None)
def test_a_voters_request_is_read_by_hand_as_kio_reads_it(
    request: fetch_req.FetchRequest, correlation_id: int, client_id: str
) -> None:
    assert read_alike(frame_of(request, correlation_id, client_id))


@given(
    request=requests(quorum_shape=False),
    correlation_id=i32,
    client_id=text,
    trailing=st.binary(max_size=3),
)
@settings(max_examples=100, deadline=None)
def test_any_request_is_read_by_hand_as_kio_reads_it_or_left_to_kio(
    request: fetch_req.FetchRequest, correlation_id: int, client_id: str, trailing: bytes
) -> None:
    """Other shapes go to kio (which reads them as before); bytes after the body are
    ignored by both, as Kafka ignores them."""
    frame = frame_of(request, correlation_id, client_id) + trailing
    read = read_alike(frame)
    shape = [len(t.partitions) for t in request.topics], request.forgotten_topics_data
    assert read == (shape == ([1], ()))


@given(
    request=requests(quorum_shape=True),
    data=st.data(),
)
@settings(max_examples=100, deadline=None)
def test_a_request_cut_short_or_altered_is_never_read_differently(
    request: fetch_req.FetchRequest, data: st.DataObject
) -> None:
    """Garbage: where kio fails, the hand path leaves the frame to kio (and its error);
    where the hand path reads, kio reads the same."""
    frame = bytearray(frame_of(request, 7, "raft"))
    if data.draw(st.booleans()):
        del frame[data.draw(st.integers(0, len(frame) - 1)) :]
    else:
        frame[data.draw(st.integers(0, len(frame) - 1))] = data.draw(st.integers(0, 255))
    altered = bytes(frame)
    try:
        decode_request(altered)
    except (MalformedRequestError, UnsupportedApiError):
        assert decode_quorum_fetch(altered) is None
    else:
        read_alike(altered)


def test_the_frame_a_voter_sends() -> None:
    message = m.FetchRequest(2, 7, 120, 6, 0, 500)
    frame = frame_of(wire.encode(message, "lab-cluster"), 41, "raft-2")
    request = decode_quorum_fetch(frame)
    assert request is not None
    assert (request.body, request.correlation_id, request.client_id) == (message, 41, "raft-2")
    assert decode_quorum_fetch(frame_of(wire.encode(message, None), 1, "")) is not None
    assert uuid.UUID(int=1) == wire.METADATA_TOPIC_ID
