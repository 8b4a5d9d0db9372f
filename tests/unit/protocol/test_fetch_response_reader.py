"""A follower's Fetch response read by hand reads exactly what kio reads: for random v12
responses, for their bytes cut short, altered or followed by more; one with a tagged field
is left to kio; records are a view of the frame."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from kio.schema.errors import ErrorCode
from kio.schema.fetch.v12 import response as schema

from kafkalite.protocol.codec import decode_response, encode_response
from kafkalite.protocol.fetch_response_reader import VERSION, read_fetch_response
from tests.support.damaged_frames import damaged

pytestmark = pytest.mark.unit

FETCH = 1
i16 = st.integers(-(2**15), 2**15 - 1)
i32 = st.integers(-(2**31), 2**31 - 1)
i64 = st.integers(-(2**63), 2**63 - 1)
errors = st.sampled_from(list(ErrorCode))


@st.composite
def responses(draw: st.DrawFn, tagged: bool = False) -> Any:
    def partition() -> Any:
        values: dict[str, Any] = {
            "partition_index": draw(i32),
            "error_code": draw(errors),
            "high_watermark": draw(i64),
            "last_stable_offset": draw(i64),
            "log_start_offset": draw(i64),
            "aborted_transactions": draw(
                st.none()
                | st.lists(
                    st.builds(schema.AbortedTransaction, producer_id=i64, first_offset=i64),
                    max_size=2,
                ).map(tuple)
            ),
            "preferred_read_replica": draw(i32),
            "records": draw(st.none() | st.binary(max_size=64)),
        }
        if tagged:
            values["diverging_epoch"] = schema.EpochEndOffset(epoch=draw(i32), end_offset=draw(i64))
        return schema.PartitionData(**values)

    topics = tuple(
        schema.FetchableTopicResponse(
            topic=draw(st.text(max_size=12)),
            partitions=tuple(partition() for _ in range(draw(st.integers(0, 3)))),
        )
        for _ in range(draw(st.integers(1 if tagged else 0, 3)))
    )
    return schema.FetchResponse(
        throttle_time=datetime.timedelta(milliseconds=draw(i32)),
        error_code=draw(errors),
        session_id=draw(i32),
        responses=topics,
    )


def frame_of(body: Any, correlation_id: int = 7) -> bytes:
    return encode_response(FETCH, VERSION, correlation_id, body)[4:]


def kio_reading(frame: bytes) -> Any:
    try:
        return decode_response(FETCH, VERSION, frame)
    except Exception:  # kio raises many types on garbage
        return None


@given(body=responses())
@settings(max_examples=300, deadline=None)
def test_any_response_is_read_as_kio_reads_it(body: Any) -> None:
    frame = frame_of(body)
    hand = read_fetch_response(bytearray(frame))
    assert hand is not None
    assert hand == kio_reading(frame) == body


@given(body=responses(tagged=True))
@settings(max_examples=50, deadline=None)
def test_a_response_with_a_tagged_field_is_left_to_kio(body: Any) -> None:
    assume(any(t.partitions for t in body.responses))  # no partition, no tagged field
    assert read_fetch_response(bytearray(frame_of(body))) is None


@given(body=responses(), data=st.data())
@settings(max_examples=300, deadline=None)
def test_a_damaged_frame_is_read_as_kio_reads_it_or_left_to_kio(
    body: Any, data: st.DataObject
) -> None:
    altered = data.draw(damaged(frame_of(body)))
    hand = read_fetch_response(altered)
    if hand is not None:
        assert hand == kio_reading(bytes(altered))


def test_records_are_a_view_of_the_frame() -> None:
    body = schema.FetchResponse(
        throttle_time=datetime.timedelta(0),
        error_code=ErrorCode.none,
        session_id=0,
        responses=(
            schema.FetchableTopicResponse(
                topic="t",
                partitions=(
                    schema.PartitionData(
                        partition_index=0,
                        error_code=ErrorCode.none,
                        high_watermark=1,
                        aborted_transactions=None,
                        records=b"r" * 100,
                    ),
                ),
            ),
        ),
    )
    frame = bytearray(frame_of(body))
    records = read_fetch_response(frame).responses[0].partitions[0].records
    assert isinstance(records, memoryview)
    assert records.obj is frame
    assert records == b"r" * 100
