"""Wire-level behaviour a real client depends on, checked with exact bytes from kio."""

from __future__ import annotations

import datetime
import socket
import struct

import pytest
from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.api_versions.v3.response import ApiVersionsResponse
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData

from kafkalite.broker.apis import served_apis
from kafkalite.broker.handler_registry import Listener
from kafkalite.protocol.kafka_versions import KAFKA_4_0
from kafkalite.protocol.records import Record, build_batch
from tests.support.raw import RawConnection, fetch_request
from tests.support.waiting import wait_for

pytestmark = pytest.mark.interop

BELOW_KAFKA_4_0 = {0: 11, 26: 4, 28: 4}
"""The versions of KIP-890 part 2 (transaction version 2) not spoken yet: API -> highest."""


def produce_request(topic: str, batch: bytes, acks: int) -> ProduceRequest:
    return ProduceRequest(
        transactional_id=None,
        acks=acks,
        timeout=datetime.timedelta(seconds=10),
        topic_data=(
            TopicProduceData(
                name=topic, partition_data=(PartitionProduceData(index=0, records=batch),)
            ),
        ),
    )


def create_topic(conn: RawConnection, topic: str) -> None:
    """Auto-create ``topic`` with Metadata, asking again while it is LEADER_NOT_AVAILABLE."""
    request = MetadataRequest(
        topics=(MetadataRequestTopic(topic_id=None, name=topic),),
        allow_auto_topic_creation=True,
        include_topic_authorized_operations=False,
    )
    wait_for(lambda: conn.request(request).topics[0].error_code == 0, what=f"{topic} created")


def test_api_versions_lists_what_the_handlers_serve_up_to_kafka_4_0(bootstrap: str) -> None:
    """ApiVersions is the handler table, and every API Kafka 4.0 serves that Kafka-Lite
    serves reaches Kafka 4.0's highest version: a client pinned to Kafka 4.0's versions
    (kafka-python's ``api_version=(4, 0, 0)``) is never closed on."""
    with RawConnection(bootstrap) as conn:
        response = conn.request(
            ApiVersionsRequest(client_software_name="t", client_software_version="1")
        )
    ranges = {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in response.api_keys}
    client = [s for s in served_apis() if s.listener is Listener.CLIENT]
    assert ranges == {s.api_key: (s.min_version, s.max_version) for s in client}
    behind = {
        api_key: (high, KAFKA_4_0[api_key][1])
        for api_key, (_, high) in ranges.items()
        if api_key in KAFKA_4_0 and high < BELOW_KAFKA_4_0.get(api_key, KAFKA_4_0[api_key][1])
    }
    assert behind == {}, f"below Kafka 4.0 (api_key: (ours, 4.0's)): {behind}"


def test_unsupported_api_versions_version_gets_a_v0_reply(bootstrap: str) -> None:
    # ApiVersions v99: header v2 layout, as a newer client would send it.
    payload = struct.pack(">hhi", 18, 99, 7) + struct.pack(">h", 1) + b"x" + b"\x00"
    with RawConnection(bootstrap) as conn:
        conn.send_bytes(struct.pack(">i", len(payload)) + payload)
        frame = conn.read_frame()
    correlation_id, error_code = struct.unpack_from(">ih", frame, 0)
    assert correlation_id == 7
    assert error_code == 35  # UNSUPPORTED_VERSION
    assert struct.unpack_from(">i", frame, 6)[0] >= 10  # the API list follows


def test_pipelined_requests_are_answered_in_order(bootstrap: str, topic: str) -> None:
    with RawConnection(bootstrap) as conn:
        create_topic(conn, topic)
        ids = []
        for i in range(20):
            batch = build_batch([Record(None, b"%d" % i, 0)])
            ids.append(conn.send(produce_request(topic, batch, acks=1)))
            ids.append(
                conn.send(ApiVersionsRequest(client_software_name="t", client_software_version="1"))
            )
        answers = []
        for i in range(20):
            cid, produced = conn.receive(ProduceRequest)
            answers.append(cid)
            assert produced.responses[0].partition_responses[0].base_offset == i
            cid, _ = conn.receive(ApiVersionsRequest)
            answers.append(cid)
    assert answers == ids


def test_acks_zero_sends_no_response(bootstrap: str, topic: str) -> None:
    with RawConnection(bootstrap) as conn:
        create_topic(conn, topic)
        conn.send(produce_request(topic, build_batch([Record(None, b"fire", 0)]), acks=0))
        probe = conn.send(ApiVersionsRequest(client_software_name="t", client_software_version="1"))
        # The very next frame on the wire is the ApiVersions answer, not a produce response.
        got, response = conn.receive(ApiVersionsRequest)
        assert got == probe
        assert isinstance(response, ApiVersionsResponse)


def test_corrupt_batch_gets_corrupt_message_and_nothing_is_written(
    bootstrap: str, topic: str
) -> None:
    with RawConnection(bootstrap) as conn:
        create_topic(conn, topic)
        good = build_batch([Record(None, b"good", 0)])
        bad = bytearray(build_batch([Record(None, b"evil", 0)]))
        bad[-1] ^= 0x55
        response = conn.request(produce_request(topic, bytes(bad), acks=1))
        assert response.responses[0].partition_responses[0].error_code == 2  # CORRUPT_MESSAGE
        response = conn.request(produce_request(topic, good, acks=1))
        assert response.responses[0].partition_responses[0].base_offset == 0


def test_two_batches_for_one_partition_are_invalid_record_and_never_duplicated(
    bootstrap: str, topic: str
) -> None:
    """Kafka allows one batch per partition from Produce v3 on. Two batches of an
    idempotent producer, sent again as a retry, were appended twice (and a third, later
    batch could be refused OUT_OF_ORDER_SEQUENCE_NUMBER)."""
    with RawConnection(bootstrap) as conn:
        create_topic(conn, topic)
        first = build_batch(
            [Record(None, b"a", 0)], producer_id=1, producer_epoch=0, base_sequence=0
        )
        second = build_batch(
            [Record(None, b"b", 0)], producer_id=1, producer_epoch=0, base_sequence=1
        )
        for _ in range(2):
            response = conn.request(produce_request(topic, first + second, acks=1))
            assert response.responses[0].partition_responses[0].error_code == 87  # INVALID_RECORD
        response = conn.request(produce_request(topic, build_batch([Record(None, b"c", 0)]), 1))
        assert response.responses[0].partition_responses[0].base_offset == 0  # nothing before


def test_oversized_frame_closes_only_that_connection(bootstrap: str) -> None:
    with RawConnection(bootstrap) as conn:
        conn.send_bytes(struct.pack(">i", 200 * 1024 * 1024) + b"\x00" * 16)
        with pytest.raises((ConnectionError, socket.timeout, OSError)):
            conn.read_frame()
    with RawConnection(bootstrap) as other:
        assert (
            other.request(
                ApiVersionsRequest(client_software_name="t", client_software_version="1")
            ).error_code
            == 0
        )


def test_fetch_from_a_broker_that_is_not_a_replica_is_refused(bootstrap: str, topic: str) -> None:
    with RawConnection(bootstrap) as conn:
        create_topic(conn, topic)
        conn.request(produce_request(topic, build_batch([Record(None, b"x", 0)]), acks=1))
        request = fetch_request(topic, replica_id=7)
        part = conn.request(request).responses[0].partitions[0]
    assert part.error_code == 6  # NOT_LEADER_OR_FOLLOWER: broker 7 is not a replica
    assert part.records == b""


def test_a_request_the_broker_cannot_serve_closes_the_connection_at_once(bootstrap: str) -> None:
    # Metadata v99 from a client that keeps its connection open and waits for an answer:
    # Kafka closes the connection, so the client fails over at once instead of waiting for
    # its request timeout.
    payload = struct.pack(">hhi", 3, 99, 5) + struct.pack(">h", 1) + b"x"
    with RawConnection(bootstrap, timeout=8) as conn:
        conn.send_bytes(struct.pack(">i", len(payload)) + payload)
        assert conn.sock.recv(1) == b""  # closed by the broker, not a timeout
