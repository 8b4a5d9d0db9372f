"""A failed handler's answer (UNKNOWN_SERVER_ERROR) fits every API and mirrors its request.

Requests are built from kio's schemas alone, for every API and version the broker serves,
with
empty arrays, null fields and one of everything; each error response must encode and
decode as that version's response. For the APIs clients retry per partition, the answer
names the same topics and partitions the request did.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from kio.index import load_request_schema, load_response_schema
from kio.schema.delete_topics.v4.request import DeleteTopicsRequest
from kio.schema.delete_topics.v4.response import DeleteTopicsResponse
from kio.schema.fetch.v12.response import FetchResponse
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.schema.metadata.v12.response import MetadataResponse
from kio.schema.produce.v9.response import ProduceResponse
from kio.serial import entity_reader, entity_writer

from kafkalite.broker.apis import served_apis
from kafkalite.protocol.error_response import error_response
from kafkalite.protocol.errors import ErrorCode
from tests.support.kio_samples import build
from tests.support.raw import fetch_request

pytestmark = pytest.mark.unit

ERROR = ErrorCode.unknown_server_error


def _versions() -> list[tuple[int, int]]:
    """Every version of every API the broker serves, on either listener."""
    return sorted(
        {(h.api_key, v) for h in served_apis() for v in range(h.min_version, h.max_version + 1)}
    )


def _round_trip(response: Any) -> Any:
    out = io.BytesIO()
    entity_writer(type(response))(out, response)
    decoded, size = entity_reader(type(response))(out.getvalue(), 0)
    assert size == len(out.getvalue())
    return decoded


@pytest.mark.parametrize("shape", ["empty", "null", "one"])
def test_every_api_and_version_has_an_error_response_that_encodes(shape: str) -> None:
    cases = _versions()
    assert len(cases) > 150
    for api_key, version in cases:
        request = build(load_request_schema(api_key, version), shape)
        response = error_response(load_response_schema(api_key, version), request, ERROR, "x")
        _round_trip(response)


def test_a_failed_produce_answers_each_partition_it_was_sent() -> None:
    request = build(load_request_schema(0, 9), "one")
    response = error_response(ProduceResponse, request, ERROR, "handler failed")
    (topic,) = response.responses
    (asked,) = request.topic_data
    assert topic.name == asked.name
    (partition,) = topic.partition_responses
    assert partition.index == asked.partition_data[0].index
    assert (partition.error_code, partition.base_offset) == (ERROR, -1)
    assert partition.error_message == "handler failed"


def test_a_failed_fetch_answers_each_partition_with_empty_records() -> None:
    response = error_response(FetchResponse, fetch_request("orders", partition=4), ERROR, "x")
    assert response.error_code == ERROR
    ((topic_name, partitions),) = [(t.topic, t.partitions) for t in response.responses]
    assert topic_name == "orders"
    (partition,) = partitions
    assert (partition.partition_index, partition.error_code) == (4, ERROR)
    assert partition.records == b"" and partition.high_watermark == -1


def test_names_asked_as_plain_strings_come_back_as_results() -> None:
    request = DeleteTopicsRequest(topic_names=("a", "b"), timeout=0)  # type: ignore[arg-type]
    response = error_response(DeleteTopicsResponse, request, ERROR, "x")
    assert [(r.name, r.error_code) for r in response.responses] == [("a", ERROR), ("b", ERROR)]


def test_a_failed_metadata_lists_each_topic_with_the_error() -> None:
    request = MetadataRequest(
        topics=(MetadataRequestTopic(topic_id=None, name="orders"),),
        allow_auto_topic_creation=True,
        include_topic_authorized_operations=False,
    )
    response = error_response(MetadataResponse, request, ERROR, "x")
    assert [(t.name, t.error_code) for t in response.topics] == [("orders", ERROR)]
    assert response.brokers == ()
