"""Hostile bytes against a running broker: it must answer or close, never crash or corrupt.

Hypothesis generates random frames, truncated and oversized frames, unknown API keys and
versions, valid headers with garbage bodies, and produce requests mangled anywhere. After
each, a separate connection must still be served; after the mangled produce requests, the
fuzzed partition's log must hold exactly the records whose produce was acknowledged, at the
offsets the acknowledgements gave, and nothing else.
"""

from __future__ import annotations

import socket
import struct

import pytest
from confluent_kafka import KafkaError, Producer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition
from kio.index import load_request_schema
from kio.schema.api_versions.v3.request import ApiVersionsRequest

from kafkalite.protocol.record_batch import iter_batches
from kafkalite.protocol.records import Record, build_batch, decode_records
from tests.integration.test_protocol import create_topic, produce_request
from tests.support.raw import RawConnection, encode_request, fetch_request

pytestmark = [pytest.mark.interop, pytest.mark.slow]

FUZZ_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _probe(bootstrap: str) -> None:
    with RawConnection(bootstrap, timeout=5) as conn:
        response = conn.request(
            ApiVersionsRequest(client_software_name="probe", client_software_version="1")
        )
        assert response.error_code == 0


def _send_and_drain(bootstrap: str, data: bytes) -> bytes:
    """Send ``data``, then read everything the broker answers until it closes."""
    received = bytearray()
    with RawConnection(bootstrap, timeout=10) as conn:
        try:
            conn.send_bytes(data)
            conn.sock.shutdown(socket.SHUT_WR)
            while chunk := conn.sock.recv(65536):
                received += chunk
        except (ConnectionError, TimeoutError, OSError):
            pass
    return bytes(received)


def _acknowledged_offset(frame: bytes, answer: bytes, topic: str) -> int | None:
    """The base offset a produce response acknowledged for ``topic``-0, decoded as the
    (maybe mangled) request's API version asks; None when nothing was acknowledged."""
    api_key, version = struct.unpack_from(">hh", frame, 4)
    if api_key != 0 or len(answer) < 4:
        return None
    try:
        request_type = load_request_schema(0, version)
        _, response = RawConnection.decode(answer[4:], request_type)
    except Exception:  # not a response to a produce request of that version
        return None
    for t in response.responses:
        for p in t.partition_responses:
            if t.name == topic and p.index == 0 and p.error_code == 0:
                return int(p.base_offset)
    return None


def _framed(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


frames = st.one_of(
    st.binary(max_size=300),
    st.binary(max_size=300).map(_framed),
    st.tuples(st.integers(-5, 120), st.integers(-3, 40), st.binary(max_size=200)).map(
        lambda t: _framed(struct.pack(">hhi", t[0], t[1], 1) + t[2])
    ),
    st.tuples(st.integers(0, 2**31 - 1), st.binary(max_size=50)).map(
        lambda t: struct.pack(">i", t[0]) + t[1]
    ),
)


@FUZZ_SETTINGS
@given(data=frames)
def test_random_frames_never_hurt_the_broker(bootstrap: str, data: bytes) -> None:
    _send_and_drain(bootstrap, data)
    _probe(bootstrap)


def test_mangled_produce_requests_leave_exactly_the_acknowledged_records(
    bootstrap: str, topic: str
) -> None:
    with RawConnection(bootstrap) as conn:
        create_topic(conn, topic)
    batch = build_batch([Record(b"k", b"value" * 10, 0)] * 3)
    acknowledged: list[int] = []

    @FUZZ_SETTINGS
    @given(cut=st.integers(0, 200), flips=st.lists(st.integers(0, 10_000), max_size=4))
    def mangle(cut: int, flips: list[int]) -> None:
        frame = bytearray(encode_request(produce_request(topic, batch, acks=1), 1))
        for flip in flips:
            frame[4 + flip % (len(frame) - 4)] ^= 0xA5
        sent = bytes(frame[: max(4, len(frame) - cut)])
        offset = _acknowledged_offset(sent, _send_and_drain(bootstrap, sent), topic)
        if offset is not None:
            acknowledged.append(offset)
        _probe(bootstrap)

    mangle()
    with RawConnection(bootstrap) as conn:
        part = conn.request(fetch_request(topic)).responses[0].partitions[0]
    data = bytes(part.records or b"")
    stored = [
        (r.offset, r.key, r.value) for p, _ in iter_batches(data) for r in decode_records(data, p)
    ]
    expected = sorted((base + i, b"k", b"value" * 10) for base in acknowledged for i in range(3))
    assert stored == expected
    assert int(part.high_watermark) == len(expected)
    assert acknowledged, "no mangled request was acknowledged: the check saw nothing"


def test_corrupt_batches_take_no_offset(bootstrap: str, topic: str) -> None:
    """Each corrupt batch is CORRUPT_MESSAGE and the next good one takes the next offset."""
    with RawConnection(bootstrap) as conn:
        create_topic(conn, topic)
        offsets = []
        for i in range(5):
            good = build_batch([Record(None, b"good-%d" % i, 0)])
            bad = bytearray(good)
            bad[70] ^= 1
            for attempt in (bytes(bad), good):
                response = conn.request(produce_request(topic, attempt, acks=1))
                part = response.responses[0].partition_responses[0]
                if attempt is good:
                    offsets.append(part.base_offset)
                else:
                    assert part.error_code == 2
    assert offsets == [0, 1, 2, 3, 4]


def test_batch_over_max_message_bytes_is_rejected(bootstrap: str, topic: str) -> None:
    with RawConnection(bootstrap) as conn:
        create_topic(conn, topic)
        huge = build_batch([Record(None, b"x" * 1_100_000, 0)])
        response = conn.request(produce_request(topic, huge, acks=1))
        assert response.responses[0].partition_responses[0].error_code == 10  # MESSAGE_TOO_LARGE


def test_a_client_cannot_write_to_an_internal_topic(bootstrap: str, topic: str) -> None:
    """Only the coordinators write ``__consumer_offsets``: librdkafka's producer gets
    INVALID_TOPIC_EXCEPTION (Kafka's answer), and the group's offsets stay readable.
    (kafka-python refuses before sending: its metadata leaves internal topics out.)"""
    group = f"g-{topic}"
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    tp = TopicPartition(topic, 0)
    with RawConnection(bootstrap, timeout=10) as conn:
        create_topic(conn, topic)
    consumer.assign([tp])
    consumer.commit({tp: OffsetAndMetadata(7, None, -1)})  # __consumer_offsets exists now

    errors: list[KafkaError] = []
    librdkafka = Producer({"bootstrap.servers": bootstrap})
    librdkafka.produce(
        "__consumer_offsets", b"garbage", b"garbage", on_delivery=lambda e, _m: errors.append(e)
    )
    assert librdkafka.flush(30) == 0
    assert [e.code() for e in errors] == [KafkaError.TOPIC_EXCEPTION]

    assert consumer.committed(tp) == 7
    consumer.close()
