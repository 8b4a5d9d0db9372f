"""A topic's ``compression.type`` applied as Kafka applies it, and ListOffsets by time and
by MAX_TIMESTAMP, with kafka-python and confluent-kafka.

A producer's batch in another codec than the topic's is recompressed by the leader; the
codec stored is visible in the raw Fetch answer (the batch's attributes), and every client
reads the records back, whatever codec they were sent in.
"""

from __future__ import annotations

import itertools

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as CTP
from confluent_kafka.admin import AdminClient, OffsetSpec
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import OffsetSpec as KOffsetSpec

from kafkalite.protocol.record_batch import iter_batches
from tests.support.raw import RawConnection, fetch_request
from tests.support.topics import create_topic

pytestmark = pytest.mark.interop

CODECS = {"uncompressed": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def _stored_codecs(bootstrap: str, topic: str) -> list[int]:
    """The codec of each batch as the broker stores it (read with a raw Fetch)."""
    with RawConnection(bootstrap) as conn:
        records = conn.request(fetch_request(topic)).responses[0].partitions[0].records
    return [header.compression for _, header in iter_batches(records)]


@pytest.mark.parametrize("codec", list(CODECS))
def test_topic_compression_type_recompresses_what_producers_send(
    bootstrap: str, topic: str, codec: str
) -> None:
    create_topic(bootstrap, topic, 1, 1, {"compression.type": codec})
    plain = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=0)
    for i in range(3):
        plain.send(topic, b"kafka-python %d" % i, partition=0).get(timeout=20)
    plain.close()
    packed = Producer({"bootstrap.servers": bootstrap, "compression.type": "gzip"})
    for i in range(3):
        packed.produce(topic, b"confluent %d" % i, partition=0)
    assert packed.flush(20) == 0
    stored = _stored_codecs(bootstrap, topic)
    assert stored and set(stored) == {CODECS[codec]}
    expected = [b"kafka-python %d" % i for i in range(3)] + [b"confluent %d" % i for i in range(3)]
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=10_000
    )
    consumer.assign([TopicPartition(topic, 0)])
    assert [m.value for m in itertools.islice(consumer, len(expected))] == expected
    consumer.close()
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": topic})
    reader.assign([CTP(topic, 0, 0)])
    got = [m.value() for m in reader.consume(len(expected), timeout=20)]
    reader.close()
    assert got == expected


def test_producer_keeps_each_producers_codec(bootstrap: str, topic: str) -> None:
    create_topic(bootstrap, topic, 1, 1, {"compression.type": "producer"})
    for codec in ("lz4", "zstd"):
        producer = Producer({"bootstrap.servers": bootstrap, "compression.type": codec})
        producer.produce(topic, b"x" * 100, partition=0)
        assert producer.flush(20) == 0
    assert _stored_codecs(bootstrap, topic) == [3, 4]


def test_max_timestamp_and_offsets_for_times_with_both_clients(bootstrap: str, topic: str) -> None:
    create_topic(bootstrap, topic, 1, 1)
    producer = Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 100, "compression.type": "zstd"}
    )
    for ts in (1_000, 3_000, 2_000):  # one compressed batch, timestamps out of order
        producer.produce(topic, b"t%d" % ts, partition=0, timestamp=ts)
    assert producer.flush(20) == 0
    producer.produce(topic, b"late", partition=0, timestamp=1_500)
    assert producer.flush(20) == 0
    tp = CTP(topic, 0)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    found = admin.list_offsets({tp: OffsetSpec.max_timestamp()})[tp].result(10)
    assert (found.offset, found.timestamp) == (1, 3_000)
    by_time = admin.list_offsets({tp: OffsetSpec.for_timestamp(1_800)})[tp].result(10)
    assert (by_time.offset, by_time.timestamp) == (1, 3_000)
    kadmin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        ktp = TopicPartition(topic, 0)
        answered = kadmin.list_partition_offsets({ktp: KOffsetSpec.MAX_TIMESTAMP})[ktp]
        earliest_local = kadmin.list_partition_offsets({ktp: KOffsetSpec.EARLIEST_LOCAL})[ktp]
    finally:
        kadmin.close()
    assert (answered.offset, answered.timestamp) == (1, 3_000)
    assert earliest_local.offset == 0
