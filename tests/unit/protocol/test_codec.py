"""Request decoding and response encoding, against bytes written by kio's own writers."""

from __future__ import annotations

import datetime
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kio.index import UnknownEntity, load_response_schema
from kio.schema.heartbeat.v4.request import HeartbeatRequest
from kio.schema.index import api_key_map
from kio.schema.metadata.v0.request import MetadataRequest as MetadataRequestV0
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.serial import entity_writer

from kafkalite.protocol import codec
from kafkalite.protocol.codec import (
    MalformedRequestError,
    UnsupportedApiError,
    build,
    decode_request,
    encode_response,
    millis,
    response_header,
    response_schema,
)
from kafkalite.protocol.errors import ErrorCode
from tests.support.raw import encode_request

pytestmark = pytest.mark.unit


def test_flexible_request_round_trip() -> None:
    body = MetadataRequest(
        topics=(MetadataRequestTopic(topic_id=None, name="a"),),
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    frame = encode_request(body, correlation_id=42, client_id="me")[4:]
    request = decode_request(frame)
    assert (request.api_key, request.api_version, request.correlation_id) == (3, 12, 42)
    assert request.client_id == "me"
    assert request.body == body


def test_legacy_request_round_trip() -> None:
    body = MetadataRequestV0(topics=())
    request = decode_request(encode_request(body, correlation_id=1)[4:])
    assert request.body == body


def test_trailing_bytes_are_ignored_as_kafka_ignores_them() -> None:
    body = MetadataRequestV0(topics=())
    request = decode_request(encode_request(body, correlation_id=1)[4:] + b"\x00\x00")
    assert request.body == body
    assert request.trailing_bytes == 2


def test_garbage_body_is_malformed() -> None:
    frame = encode_request(MetadataRequestV0(topics=()), correlation_id=1)[4:]
    with pytest.raises(MalformedRequestError):
        decode_request(frame[:-1] + b"\xff\xff\xff\xff")


def test_unknown_api_key_and_version() -> None:
    with pytest.raises(UnsupportedApiError) as caught:
        decode_request(b"\x03\xe7\x00\x00\x00\x00\x00\x07")
    assert caught.value.correlation_id == 7
    with pytest.raises(UnsupportedApiError):
        decode_request(b"\x00\x03\x00\x63\x00\x00\x00\x01")


def test_response_header_versions() -> None:
    v0 = response_schema(3, 0)
    body = v0.MetadataResponse(brokers=(), topics=())
    frame = encode_response(3, 0, 5, body)
    assert frame[:8] == b"\x00\x00\x00\x0c\x00\x00\x00\x05"  # size 12, correlation id 5
    v12 = response_schema(3, 12)
    frame = encode_response(3, 12, 5, v12.MetadataResponse(throttle_time=0, brokers=(), topics=()))
    assert frame[8] == 0  # header v1: an empty tagged-field section after the correlation id


def _responses() -> list[tuple[int, int]]:
    """Every (API key, version) kio has a response schema for."""
    found = []
    for api_key in api_key_map:
        for version in range(64):
            try:
                load_response_schema(api_key, version)
            except UnknownEntity:
                continue
            found.append((api_key, version))
    return found


@given(api=st.sampled_from(_responses()), correlation_id=st.integers(-(2**31), 2**31 - 1))
@settings(max_examples=500, deadline=None)
def test_the_response_header_is_kios(api: tuple[int, int], correlation_id: int) -> None:
    """The packed header is the bytes of the header kio's response class names, for every
    API and version (ApiVersions' header is v0 in every version)."""
    header_cls = load_response_schema(*api).__header_schema__
    out = io.BytesIO()
    entity_writer(header_cls)(out, header_cls(correlation_id=correlation_id))
    assert response_header(*api, correlation_id) == out.getvalue()


def test_build_drops_fields_a_version_lacks_and_converts_times() -> None:
    v3 = response_schema(0, 3)
    part = v3.PartitionProduceResponse(
        index=0,
        error_code=6,
        base_offset=5,
        log_append_time=-1,
        log_start_offset=9,
        record_errors=(),
    )
    assert part.error_code == ErrorCode.not_leader_or_follower
    assert part.log_append_time is None
    assert not hasattr(part, "log_start_offset")
    assert (
        build(
            type(part), {"index": 1, "error_code": 0, "base_offset": 1, "log_append_time": 0}
        ).index
        == 1
    )
    assert millis(datetime.timedelta(seconds=2)) == 2000
    assert millis(None) == -1


def test_millis_are_exact() -> None:
    """Whole milliseconds read back whole: through ``total_seconds() * 1000`` (a float)
    527555401 ms came back as 527555400 (found by the quorum Fetch's property test)."""
    for ms in (527555401, 2**31 - 1, -(2**31), 1, 0):
        assert millis(datetime.timedelta(milliseconds=ms)) == ms
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
    assert millis(epoch + datetime.timedelta(milliseconds=1_764_400_000_123)) == 1_764_400_000_123


def test_a_repeated_request_is_read_once_and_answered_with_its_own_correlation_id() -> None:
    """A Heartbeat sent again (a new correlation id, the same bytes otherwise) reuses
    kio's reading of the first; a different one, or one from another client, does not."""
    body = HeartbeatRequest(group_id="g", generation_id=3, member_id="m", group_instance_id=None)  # type: ignore[arg-type]
    first = decode_request(encode_request(body, 1, "a")[4:])
    again = decode_request(encode_request(body, 2, "a")[4:])
    assert (first.correlation_id, again.correlation_id) == (1, 2)
    assert again.body is first.body  # not read again
    other = decode_request(encode_request(body, 3, "b")[4:])
    assert (other.client_id, other.body) == ("b", first.body)
    assert other.body is not first.body
    newer = HeartbeatRequest(group_id="g", generation_id=4, member_id="m", group_instance_id=None)  # type: ignore[arg-type]
    assert decode_request(encode_request(newer, 4, "a")[4:]).body.generation_id == 4
    with pytest.raises(MalformedRequestError):  # an unreadable one is not kept
        decode_request(encode_request(body, 5, "a")[4:-3])
    for n in range(codec.REPEATED_KEPT + 10):  # the memory is bounded
        decode_request(encode_request(body, 6, f"client-{n}")[4:])
    assert len(codec._read_before) == codec.REPEATED_KEPT
