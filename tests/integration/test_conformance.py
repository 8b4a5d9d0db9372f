"""Every request version a broker lists in ApiVersions gets a well-formed answer.

For each API and for its lowest and its highest version, requests are built from kio's
schemas (never from the broker's code) in three shapes: every array empty, every nullable
field null (``topics=null`` means "all" in Metadata, OffsetFetch, DescribeLogDirs, ...),
and every array holding one element. Each is sent as raw bytes; the answer must come
back on the same connection, carry the request's correlation id and decode completely
as that version's response. A request that gets no answer, a closed connection or a
response that does not parse is what makes a client hang or disconnect.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from kio.index import load_request_schema, load_response_schema
from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.metadata.v12.request import MetadataRequest
from kio.schema.response_header.v0.header import ResponseHeader as ResponseHeaderV0
from kio.schema.response_header.v1.header import ResponseHeader as ResponseHeaderV1
from kio.serial import entity_reader, entity_writer
from kio.serial.errors import OutOfBoundValue

from tests.support.kio_samples import build
from tests.support.raw import RawConnection, encode_request

pytestmark = pytest.mark.interop

SHAPES = ("empty", "null", "one")
API_VERSIONS = 18


def _advertised(bootstrap: str) -> dict[int, tuple[int, int]]:
    with RawConnection(bootstrap) as conn:
        response = conn.request(
            ApiVersionsRequest(client_software_name="conformance", client_software_version="1")
        )
    return {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in response.api_keys}


def _cases(advertised: dict[int, tuple[int, int]]) -> Iterator[tuple[int, int]]:
    for api_key, (low, high) in sorted(advertised.items()):
        yield from ((api_key, v) for v in sorted({low, high}))


def _decode_whole(api_key: int, version: int, frame: bytes) -> tuple[int, Any]:
    """The response's correlation id and body; fails unless every byte is accounted for."""
    schema = load_response_schema(api_key, version)
    header_cls = (
        ResponseHeaderV1 if schema.__flexible__ and api_key != API_VERSIONS else (ResponseHeaderV0)
    )
    header, header_size = entity_reader(header_cls)(frame, 0)
    try:
        body, body_size = entity_reader(schema)(frame, header_size)
    except OutOfBoundValue as exc:
        # Kafka writes -1 in timestamp fields for "none" (DescribeTransactions of an
        # empty transaction); kio cannot represent it. Every client reads it as an int64.
        if "negative timestamp" not in str(exc):
            raise
        return int(header.correlation_id), None
    assert header_size + body_size == len(frame), (
        f"{len(frame) - header_size - body_size} bytes left after the response"
    )
    return int(header.correlation_id), body


def _exchange(conn: RawConnection, request: Any, correlation_id: int) -> str | None:
    """Send one request; None if it was answered well, else what went wrong."""
    try:
        conn.send_bytes(encode_request(request, correlation_id, client_id="conformance"))
        frame = conn.read_frame()
    except (ConnectionError, TimeoutError, OSError) as exc:
        return f"no answer ({exc!r})"
    try:
        got, body = _decode_whole(request.__api_key__, request.__version__, frame)
    except Exception as exc:  # any decoding failure is the finding
        return f"answer does not decode: {exc!r}"
    if got != correlation_id:
        return f"answer carries correlation id {got}, not {correlation_id}"
    if body is not None:
        entity_writer(type(body))(io.BytesIO(), body)  # and it is a valid value of its schema
    return None


@pytest.mark.parametrize("shape", SHAPES)
def test_every_advertised_version_is_answered(bootstrap: str, shape: str) -> None:
    failures = []
    cases = list(_cases(_advertised(bootstrap)))
    for number, (api_key, version) in enumerate(cases, start=1):
        request = build(load_request_schema(api_key, version), shape)
        with RawConnection(bootstrap, timeout=15) as conn:
            problem = _exchange(conn, request, number)
            if problem is None:  # the connection still serves the next request
                probe = ApiVersionsRequest(client_software_name="c", client_software_version="1")
                problem = _exchange(conn, probe, 100_000 + number) and "connection unusable after"
        if problem is not None:
            failures.append(f"{type(request).__name__} v{version}: {problem}")
    assert len(cases) >= 40
    assert not failures, "\n".join(failures)


def test_the_builder_makes_each_shape() -> None:
    assert build(MetadataRequest, "null").topics is None
    assert build(MetadataRequest, "empty").topics == ()
    (topic,) = build(MetadataRequest, "one").topics
    assert topic.name == "conformance-name"
