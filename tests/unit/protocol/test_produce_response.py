"""The hand-written Produce response encoder writes exactly kio's bytes, for random
responses of every version it covers (no KIP-951 leader hints: those are kio's)."""

from __future__ import annotations

import datetime
import io
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kio.index import load_response_schema
from kio.schema.errors import ErrorCode
from kio.schema.response_header.v0.header import ResponseHeader as ResponseHeaderV0
from kio.schema.response_header.v1.header import ResponseHeader as ResponseHeaderV1
from kio.serial import entity_writer

from kafkalite.protocol.produce_response import MAX_VERSION, MIN_VERSION, encode_produce_response

pytestmark = pytest.mark.unit

PRODUCE = 0
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


@dataclass(frozen=True)
class Answer:
    error: int
    base_offset: int
    log_append_time_ms: int
    log_start_offset: int
    message: str | None


i64 = st.integers(-(2**63), 2**63 - 1)
answers = st.builds(
    Answer,
    error=st.sampled_from([0, 2, 6, 10, 19, 20, 45, 48]),
    base_offset=i64,
    log_append_time_ms=st.just(-1) | st.integers(0, 2**47),
    log_start_offset=i64,
    message=st.none() | st.text(max_size=40),
)
topics = st.lists(
    st.tuples(
        st.text(min_size=1, max_size=20),
        st.lists(st.tuples(st.integers(-(2**31), 2**31 - 1), answers), max_size=4),
    ),
    max_size=3,
)


def kio_bytes(version: int, correlation_id: int, topics: list[Any], throttle: int) -> bytes:
    cls = load_response_schema(PRODUCE, version)
    module = __import__(cls.__module__, fromlist=["x"])

    def partition(index: int, a: Answer) -> Any:
        values: dict[str, Any] = {
            "index": index,
            "error_code": ErrorCode(a.error),
            "base_offset": a.base_offset,
            "log_append_time": None
            if a.log_append_time_ms < 0
            else EPOCH + datetime.timedelta(milliseconds=a.log_append_time_ms),
        }
        if version >= 5:
            values["log_start_offset"] = a.log_start_offset
        if version >= 8:
            values |= {"record_errors": (), "error_message": a.message}
        return module.PartitionProduceResponse(**values)

    body = cls(
        responses=tuple(
            module.TopicProduceResponse(
                name=name, partition_responses=tuple(partition(i, a) for i, a in parts)
            )
            for name, parts in topics
        ),
        throttle_time=datetime.timedelta(milliseconds=throttle),
    )
    out = io.BytesIO()
    header = ResponseHeaderV1 if cls.__flexible__ else ResponseHeaderV0
    entity_writer(header)(out, header(correlation_id=correlation_id))
    entity_writer(cls)(out, body)
    frame = out.getvalue()
    return len(frame).to_bytes(4, "big") + frame


@given(
    version=st.integers(MIN_VERSION, MAX_VERSION),
    correlation_id=st.integers(-(2**31), 2**31 - 1),
    topics=topics,
    throttle=st.integers(0, 2**31 - 1),
)
@settings(max_examples=400, deadline=None)
def test_encodes_as_kio_does(
    version: int, correlation_id: int, topics: list[Any], throttle: int
) -> None:
    expected = kio_bytes(version, correlation_id, topics, throttle)
    assert encode_produce_response(version, correlation_id, topics, throttle) == expected
