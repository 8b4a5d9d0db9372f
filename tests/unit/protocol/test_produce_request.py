"""The Produce request read by hand reads exactly what kio reads: for random requests of
every version it covers, for their bytes cut short, altered or followed by more, and with
the records a view of the frame (writable when the frame is a buffer of its own)."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite.protocol.codec import MalformedRequestError, Request, decode_request, encode_request
from kafkalite.protocol.produce_request import (
    MAX_VERSION,
    MIN_VERSION,
    _schema,
    decode_produce_request,
)
from kafkalite.protocol.records import Record, build_batch
from tests.support.damaged_frames import damaged

pytestmark = pytest.mark.unit

i16 = st.integers(-(2**15), 2**15 - 1)
i32 = st.integers(-(2**31), 2**31 - 1)
text = st.text(max_size=12)


@st.composite
def requests(draw: st.DrawFn, version: int) -> tuple[bytes, str | None, int]:
    """A Produce request of ``version`` as its frame (no size prefix), with the client id
    and correlation id it was sent with."""
    schema = _schema(version)
    topics = tuple(
        schema.TopicProduceData(
            name=draw(text),
            partition_data=tuple(
                schema.PartitionProduceData(
                    index=draw(i32), records=draw(st.none() | st.binary(max_size=64))
                )
                for _ in range(draw(st.integers(0, 3)))
            ),
        )
        for _ in range(draw(st.integers(0, 3)))
    )
    body = schema.ProduceRequest(
        transactional_id=draw(st.none() | text),
        acks=draw(i16),
        timeout=datetime.timedelta(milliseconds=draw(i32)),
        topic_data=topics,
    )
    client_id = draw(st.none() | text)
    correlation_id = draw(i32)
    frame = encode_request(body, correlation_id, client_id)  # type: ignore[arg-type]
    return frame[4:], client_id, correlation_id


def kio_reading(frame: bytes) -> Request | None:
    try:
        return decode_request(frame)
    except MalformedRequestError:
        return None


def assert_same(hand: Request, kio: Request) -> None:
    assert (hand.api_key, hand.api_version, hand.correlation_id, hand.client_id) == (
        kio.api_key,
        kio.api_version,
        kio.correlation_id,
        kio.client_id,
    )
    assert hand.body == kio.body  # records: a view of the frame, equal to kio's bytes
    assert type(hand.body) is type(kio.body)
    assert hand.trailing_bytes == kio.trailing_bytes


@given(data=st.data(), version=st.integers(MIN_VERSION, MAX_VERSION))
@settings(max_examples=400, deadline=None)
def test_any_request_is_read_as_kio_reads_it(data: st.DataObject, version: int) -> None:
    frame, client_id, correlation_id = data.draw(requests(version))
    hand = decode_produce_request(bytearray(frame))
    assert hand is not None
    assert hand.client_id == client_id
    assert hand.correlation_id == correlation_id
    kio = kio_reading(frame)
    assert kio is not None
    assert_same(hand, kio)


@given(data=st.data(), version=st.integers(MIN_VERSION, MAX_VERSION))
@settings(max_examples=400, deadline=None)
def test_a_damaged_frame_is_read_as_kio_reads_it_or_left_to_kio(
    data: st.DataObject, version: int
) -> None:
    """Cut short, one byte changed, bytes after it: whatever the hand reads, kio reads
    the same; what it leaves (``None``), kio reads or refuses on its own."""
    frame, _, _ = data.draw(requests(version))
    altered = data.draw(damaged(frame))
    hand = decode_produce_request(altered)
    if hand is not None:
        kio = kio_reading(bytes(altered))
        assert kio is not None
        assert_same(hand, kio)


def test_records_in_a_buffer_of_its_own_are_a_writable_view_of_it() -> None:
    """What the leader patches in place: a big frame's records, not a copy of them."""
    batch = build_batch([Record(None, b"x" * 100, 0)])
    schema = _schema(MAX_VERSION)
    body = schema.ProduceRequest(
        transactional_id=None,
        acks=-1,
        timeout=datetime.timedelta(seconds=30),
        topic_data=(
            schema.TopicProduceData(
                name="t", partition_data=(schema.PartitionProduceData(index=0, records=batch),)
            ),
        ),
    )
    frame = bytearray(encode_request(body, 7, "c")[4:])
    request = decode_produce_request(frame)
    assert request is not None
    records = request.body.topic_data[0].partition_data[0].records
    assert isinstance(records, memoryview)
    assert not records.readonly
    assert records == batch
    records[0:8] = b"\0\0\0\0\0\0\0\x2a"
    assert bytes(frame).count(b"\0\0\0\0\0\0\0\x2a" + batch[8:12]) == 1  # in the frame itself


def test_small_frames_other_apis_and_versions_are_left_to_kio() -> None:
    schema = _schema(MAX_VERSION)
    body = schema.ProduceRequest(
        transactional_id=None, acks=1, timeout=datetime.timedelta(seconds=1), topic_data=()
    )
    frame = bytearray(encode_request(body, 1, None)[4:])
    assert decode_produce_request(bytes(frame)) is None  # copied out of its read: kio's
    assert decode_produce_request(frame) is not None
    frame[2:4] = (13).to_bytes(2, "big")  # v13 names topics by id
    assert decode_produce_request(frame) is None
    frame[0:4] = (1).to_bytes(2, "big") + (12).to_bytes(2, "big")  # a Fetch
    assert decode_produce_request(frame) is None
