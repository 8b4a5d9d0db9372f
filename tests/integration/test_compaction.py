"""Log compaction on three real brokers: the latest value per key survives, the rest goes.

Before the log cleaner, ``cleanup.policy=compact`` was accepted and nothing compacted: every
version of every key stayed, and ``__consumer_offsets`` grew forever. Each test writes
keyed records with the real clients, waits for the brokers' ``log_cleaned`` events, and
reads the partition back as consumers do, also after its leader is killed.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KpTopicPartition
from kafka.structs import OffsetAndMetadata

from kafkalite.cluster import Cluster
from tests.integration.test_replication import (
    create_topic,
    fully_replicated,
    kill_offsets_leader,
    partition,
)
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]
COMPACTED = {
    "cleanup.policy": "compact",
    "segment.bytes": "2000",
    "min.cleanable.dirty.ratio": "0.01",
    "min.insync.replicas": "2",
}
Row = tuple[int, bytes | None, bytes | None]


def read_partition(cluster: Cluster, topic: str, end: int, isolation: str = "read_uncommitted"):
    """(offset, key, value) of every record a confluent-kafka consumer reads below ``end``."""
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": f"reader-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
            "isolation.level": isolation,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    rows: list[Row] = []
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                position = consumer.position([TopicPartition(topic, 0)])[0].offset
                if position >= end:
                    break
                continue
            if message.error():
                raise KafkaException(message.error())
            rows.append((message.offset(), message.key(), message.value()))
    finally:
        consumer.close()
    return rows


def cleaned_on_every_replica(cluster: Cluster, topic: str, beyond: int) -> dict[int, Any] | None:
    """Each broker's latest ``log_cleaned`` event for the partition, once all three cleaned
    past ``beyond``."""
    latest: dict[int, Any] = {}
    for e in cluster.events():
        if e["type"] == "log_cleaned" and e["topic"] == topic:
            latest[e["broker"]] = e
    done = {b: e for b, e in latest.items() if e["cleaned_up_to"] > beyond}
    return done if len(done) == 3 else None


def test_a_compacted_topic_keeps_the_latest_value_per_key_across_a_failover(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    topic = create_topic(cluster, **COMPACTED)
    producer = KafkaProducer(  # small batches: many segments of 2000 bytes
        bootstrap_servers=cluster.bootstrap_servers, acks="all", batch_size=200
    )
    written: list[tuple[bytes, bytes | None]] = []
    for version in range(30):
        for key in (b"alice", b"bob", b"carol"):
            value = b"%s-%d" % (key, version) + b"." * 40
            producer.send(topic, key=key, value=value)
            written.append((key, value))
    producer.send(topic, key=b"bob", value=None)  # bob is deleted: a tombstone
    written.append((b"bob", None))
    for filler in range(40):  # roll the segment holding all that, so it can be cleaned
        producer.send(topic, key=b"filler", value=b"%d" % filler + b"." * 40)
        written.append((b"filler", b"%d" % filler + b"." * 40))
    producer.flush(30)
    producer.close()
    end = len(written)
    cleaned = wait_for(
        lambda: cleaned_on_every_replica(cluster, topic, beyond=91),
        timeout_s=60,
        what="every replica compacted past the tombstone",
    )
    assert all(e["records_removed"] > 0 for e in cleaned.values())
    p = wait_for(lambda: fully_replicated(cluster, topic), what="replicated")
    cluster.kill(p["leader"])
    wait_for(
        lambda: partition(cluster, topic)["leader"] not in (None, p["leader"]),
        what="a new leader",
    )
    rows = read_partition(cluster, topic, end)
    latest = {}
    for offset, (key, value) in enumerate(written):
        latest[key] = (offset, value)
    # every key's latest value is there, at its own offset; older versions of alice and
    # carol are gone from what was cleaned; bob's tombstone is kept (delete.retention.ms)
    for key, (offset, value) in latest.items():
        assert (offset, key, value) in rows
    cleaned_up_to = min(e["cleaned_up_to"] for e in cleaned.values())
    old = [r for r in rows if r[0] < cleaned_up_to and r[1] in (b"alice", b"carol")]
    assert sorted(old) == sorted(
        (latest[k][0], k, latest[k][1])
        for k in (b"alice", b"carol")
        if latest[k][0] < cleaned_up_to
    )
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)
    assert len(rows) < end


def test_a_compacted_topic_refuses_a_record_without_a_key(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    topic = create_topic(cluster, **COMPACTED)
    errors: list[Any] = []
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "retries": 0})
    producer.produce(topic, value=b"no key", on_delivery=lambda e, m: errors.append(e))
    producer.flush(30)
    assert [e.name() for e in errors] == ["INVALID_RECORD"]


def test_aborted_records_are_compacted_away_and_committed_ones_stay_readable(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    topic = create_topic(cluster, **COMPACTED)
    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "transactional.id": f"tx-{topic}",
            "batch.size": 200,
        }
    )
    producer.init_transactions(30)
    for outcome in ("commit", "abort", "commit"):
        producer.begin_transaction()
        for i in range(10):
            producer.produce(topic, key=b"k%d" % i, value=b"%s-%d" % (outcome.encode(), i))
        producer.flush(30)
        getattr(producer, f"{outcome}_transaction")(30)
    plain = Producer(
        {"bootstrap.servers": cluster.bootstrap_servers, "acks": "all", "batch.size": 200}
    )
    for filler in range(60):
        plain.produce(topic, key=b"filler", value=b"%d" % filler + b"." * 40)
    assert plain.flush(30) == 0
    end = 33 + 60
    wait_for(
        lambda: cleaned_on_every_replica(cluster, topic, beyond=33),
        timeout_s=60,
        what="every replica compacted past the transactions",
    )
    for isolation in ("read_committed", "read_uncommitted"):
        values = [v for _, k, v in read_partition(cluster, topic, end, isolation) if k != b"filler"]
        assert sorted(values) == sorted(b"commit-%d" % i for i in range(10)), isolation


def test_consumer_offsets_are_compacted_and_survive_a_coordinator_failover(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3(
        **{"log.cleaner.backoff.ms": "200", "offsets.topic.segment.bytes": "2000"}
    )
    topic = create_topic(cluster)
    group = f"g-{uuid.uuid4().hex[:6]}"
    consumer = KafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers, group_id=group, enable_auto_commit=False
    )
    tp = KpTopicPartition(topic, 0)
    for offset in range(1, 300):
        consumer.commit({tp: OffsetAndMetadata(offset, "", -1)})
    consumer.close()
    cleaned = wait_for(
        lambda: [
            e
            for e in cluster.events()
            if e["type"] == "log_cleaned" and e["topic"] == "__consumer_offsets"
        ],
        timeout_s=60,
        what="__consumer_offsets compacted",
    )
    assert sum(e["records_removed"] for e in cleaned) > 0
    kill_offsets_leader(cluster)
    reader = KafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers, group_id=group, enable_auto_commit=False
    )
    try:
        assert reader.committed(tp) == 299  # the new coordinator loaded the compacted log
    finally:
        reader.close()
