"""kafka-python (the students' client) against a real Kafka-Lite broker process."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import (
    ConfigResource,
    ConfigResourceType,
    KafkaAdminClient,
    NewPartitions,
    NewTopic,
)
from kafka.errors import (
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    InvalidTopicError,
    TopicAlreadyExistsError,
)

from kafkalite.cluster import Cluster
from tests.support.waiting import wait_for

pytestmark = pytest.mark.interop


def _consume_all(
    bootstrap: str, topic: str, expected: int, timeout_s: float = 20, **config: object
) -> list:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=1000,
        **config,
    )
    consumer.assign([TopicPartition(topic, 0)])
    records: list = []
    deadline = time.monotonic() + timeout_s
    while len(records) < expected and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=500).values():
            records.extend(batch)
    consumer.close()
    return records


def test_idempotent_producer_round_trip(bootstrap: str, topic: str) -> None:
    # kafka-python 3 defaults: enable_idempotence=True, acks=all.
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    futures = [
        producer.send(topic, key=f"k{i}".encode(), value=f"v{i}".encode()) for i in range(100)
    ]
    metadata = [f.get(timeout=20) for f in futures]
    producer.close()
    assert [m.offset for m in metadata] == list(range(100))
    records = _consume_all(bootstrap, topic, 100)
    assert [(r.offset, r.key, r.value) for r in records] == [
        (i, f"k{i}".encode(), f"v{i}".encode()) for i in range(100)
    ]


@pytest.mark.parametrize("acks", [0, 1, "all"])
def test_acks_levels(bootstrap: str, topic: str, acks: object) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=acks, enable_idempotence=False)
    for i in range(20):
        producer.send(topic, value=b"x%d" % i)
    producer.flush(timeout=20)
    producer.close()
    values = [r.value for r in _consume_all(bootstrap, topic, 20)]
    assert values == [b"x%d" % i for i in range(20)]


def test_headers_timestamps_and_offsets_for_times(bootstrap: str, topic: str) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    base = int(time.time() * 1000) - 100_000
    for i in range(10):
        producer.send(topic, value=b"v", headers=[("h", b"%d" % i)], timestamp_ms=base + i * 1000)
    producer.flush(timeout=20)
    producer.close()
    records = _consume_all(bootstrap, topic, 10)
    assert [r.timestamp for r in records] == [base + i * 1000 for i in range(10)]
    assert records[3].headers == [("h", b"3")]
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    tp = TopicPartition(topic, 0)
    found = consumer.offsets_for_times({tp: base + 4500})[tp]
    assert found is not None and found.offset == 5 and found.timestamp == base + 5000
    assert consumer.offsets_for_times({tp: base + 10**9})[tp] is None
    assert consumer.beginning_offsets([tp])[tp] == 0
    assert consumer.end_offsets([tp])[tp] == 10
    consumer.close()


def test_admin_topic_lifecycle_and_validation(bootstrap: str, topic: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])
    described = admin.describe_topics([topic])
    assert len(described[0]["partitions"]) == 3
    with pytest.raises(TopicAlreadyExistsError):
        admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    with pytest.raises(InvalidReplicationFactorError):
        admin.create_topics([NewTopic(topic + "-rf", num_partitions=1, replication_factor=3)])
    with pytest.raises(InvalidTopicError):
        admin.create_topics([NewTopic("bad/name", num_partitions=1, replication_factor=1)])
    admin.create_partitions({topic: NewPartitions(total_count=5)})
    assert len(admin.describe_topics([topic])[0]["partitions"]) == 5
    with pytest.raises(InvalidPartitionsError):
        admin.create_partitions({topic: NewPartitions(total_count=2)})
    admin.delete_topics([topic])
    wait_for(lambda: topic not in admin.list_topics(), 10, f"{topic} deleted")
    admin.close()


def test_auto_topic_creation(bootstrap: str, topic: str) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    producer.send(topic, b"hello").get(timeout=20)
    producer.close()
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    assert topic in admin.list_topics()
    admin.close()


def test_describe_producers_and_delete_records(bootstrap: str, topic: str) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap)  # idempotent by default
    for i in range(10):
        producer.send(topic, b"v%d" % i, partition=0)
    producer.flush(timeout=20)
    producer.close()
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    tp = TopicPartition(topic, 0)
    producers = admin.describe_producers([tp])[tp].active_producers
    assert len(producers) == 1
    assert producers[0].last_sequence == 9
    admin.delete_records({tp: 4})
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    assert consumer.beginning_offsets([tp])[tp] == 4
    consumer.close()
    admin.close()


def test_producer_ids_are_never_reused_across_a_crash(fresh_cluster: Cluster) -> None:
    bootstrap = fresh_cluster.bootstrap_servers
    tp = TopicPartition("pids", 0)

    def produce_one() -> None:
        producer = KafkaProducer(bootstrap_servers=bootstrap)
        producer.send(tp.topic, b"x", partition=0).get(timeout=20)
        producer.close()

    produce_one()
    fresh_cluster.kill(1)
    fresh_cluster.restart(1)
    produce_one()
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    ids = [p.producer_id for p in admin.describe_producers([tp])[tp].active_producers]
    admin.close()
    assert len(ids) == 2 and len(set(ids)) == 2


def test_alter_and_describe_configs(bootstrap: str, topic: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    resource = ConfigResource(
        ConfigResourceType.TOPIC,
        topic,
        configs={"retention.ms": "120000", "min.insync.replicas": "1"},
    )
    admin.alter_configs([resource], incremental=False)
    described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    text = repr(described)
    assert "retention.ms" in text and "120000" in text
    rejected = admin.alter_configs(
        [ConfigResource(ConfigResourceType.TOPIC, topic, configs={"segment.bytes": "-1"})],
        incremental=False,
    )
    assert "InvalidConfigurationError" in rejected["topic"][topic]
    assert "segment.bytes: must be at least 14" in rejected["topic"][topic]
    admin.close()


def test_fetch_long_poll_waits_for_data(bootstrap: str, topic: str) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    producer.send(topic, b"first").get(timeout=20)
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, fetch_max_wait_ms=3000, auto_offset_reset="latest"
    )
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek(tp, 1)
    started = time.monotonic()
    assert consumer.poll(timeout_ms=1000) == {}  # nothing yet: the fetch is parked
    producer.send(topic, b"second").get(timeout=20)
    got = []
    while not got and time.monotonic() - started < 10:
        for records in consumer.poll(timeout_ms=500).values():
            got.extend(r.value for r in records)
    assert got == [b"second"]
    producer.close()
    consumer.close()


def test_kafka_python_infers_a_recent_kafka_from_api_versions(bootstrap: str) -> None:
    """kafka-python guesses the broker's release from ApiVersions and turns on what that
    release has; Kafka-Lite's ranges read as Kafka 4.x (they read as 3.0 before)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        assert admin.get_broker_version_data(1).broker_version >= (4, 0)
    finally:
        admin.close()
