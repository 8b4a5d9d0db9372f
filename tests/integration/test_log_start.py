"""Deleted records stay deleted: followers honour their leader's log start offset.

DeleteRecords and retention move the leader's log start. A follower must follow it (Kafka's
fetcher advances its log start from every fetch response), or the records come back when
it leads; and a follower whose whole log lies below the leader's log start must empty its
log and restart there, instead of asking for offsets the leader no longer has forever.
Three real brokers, a real kill, kafka-python and confluent-kafka.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer
from confluent_kafka import TopicPartition as CkTopicPartition
from kafka import KafkaAdminClient, KafkaConsumer
from kafka import TopicPartition as KpTopicPartition

from kafkalite.cluster import Cluster
from tests.integration.test_replication import create_topic, fully_replicated, partition
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]


def produce(cluster: Cluster, topic: str, count: int, size: int = 10) -> None:
    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap_servers, "acks": "all", "batch.size": 1000}
    )
    errors: list[Any] = []
    for i in range(count):
        value = (b"%d-" % i).ljust(size, b"x")
        producer.produce(topic, value, on_delivery=lambda e, m: e and errors.append(e))
    assert producer.flush(60) == 0
    assert errors == []


def offsets_from_earliest(cluster: Cluster, topic: str, end: int) -> list[int]:
    """Every offset a consumer starting at the beginning reads, up to ``end``."""
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": f"g-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([CkTopicPartition(topic, 0, OFFSET_BEGINNING)])
    offsets: list[int] = []
    deadline = time.monotonic() + 30
    try:
        while (not offsets or offsets[-1] < end - 1) and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and not message.error():
                offsets.append(message.offset())
    finally:
        consumer.close()
    return offsets


def earliest_offset(cluster: Cluster, topic: str) -> int:
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers)
    tp = KpTopicPartition(topic, 0)
    try:
        return int(consumer.beginning_offsets([tp])[tp])
    finally:
        consumer.close()


def replica_views(cluster: Cluster, topic: str) -> dict[int, dict[str, Any]]:
    """Each live broker's own row for partition 0 (its log start and end offsets)."""
    views: dict[int, dict[str, Any]] = {}
    for broker_id in (1, 2, 3):
        state = cluster.introspect(broker_id)
        for p in (state or {}).get("partitions", []):
            if p["topic"] == topic and p["partition"] == 0:
                views[broker_id] = p
    return views


def new_leader(cluster: Cluster, topic: str, old: int) -> int:
    return int(
        wait_for(
            lambda: (leader := partition(cluster, topic)["leader"]) not in (None, old) and leader,
            what="a new leader",
        )
    )


def test_delete_records_then_failover_keeps_them_deleted(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    topic = create_topic(cluster, **{"min.insync.replicas": "2"})
    produce(cluster, topic, 100)
    before = wait_for(lambda: fully_replicated(cluster, topic), what="replicated")
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        admin.delete_records({KpTopicPartition(topic, 0): 60})  # kafka-python: students' client
    finally:
        admin.close()
    # DeleteRecords answered only once every live replica's log start passed 60
    views = wait_for(lambda: len(v := replica_views(cluster, topic)) == 3 and v, what="3 views")
    assert {b: v["log_start_offset"] for b, v in views.items()} == {1: 60, 2: 60, 3: 60}
    cluster.kill(before["leader"])  # at once: no time for anything to catch up later
    new_leader(cluster, topic, before["leader"])
    assert earliest_offset(cluster, topic) == 60
    assert offsets_from_earliest(cluster, topic, 100) == list(range(60, 100))


def test_a_follower_behind_the_leaders_log_start_restarts_there_and_rejoins(
    make_cluster3: Callable[..., Cluster],
) -> None:
    """Retention on the leader while a follower is down: the follower's log ends below the
    leader's log start when it returns. It must empty its log, restart at the leader's log
    start, catch up and rejoin the ISR; after a failover nothing retention deleted is back."""
    cluster = make_cluster3(**{"log.retention.check.interval.ms": "200"})
    topic = create_topic(
        cluster,
        **{"min.insync.replicas": "1", "segment.bytes": "2000", "retention.bytes": "6000"},
    )
    produce(cluster, topic, 20, size=100)
    p = wait_for(lambda: fully_replicated(cluster, topic), what="replicated")
    leader = p["leader"]
    away = next(r["broker"] for r in p["replicas"] if r["broker"] != leader)
    cluster.kill(away)
    produce(cluster, topic, 400, size=100)  # ~50 KB: retention deletes the oldest segments
    start = wait_for(
        lambda: (s := partition(cluster, topic)["log_start_offset"] or 0) > 20 and s,
        what="retention on the leader",
    )
    cluster.restart(away)
    wait_for(
        lambda: (
            away in partition(cluster, topic)["isr"]
            and replica_views(cluster, topic).get(away, {}).get("log_end_offset") == 420
        ),
        timeout_s=30,
        what="the returning follower caught up and back in the ISR",
    )
    returned = replica_views(cluster, topic)[away]
    assert returned["log_start_offset"] >= start
    events = [
        e
        for e in cluster.events()
        if e["type"] == "log_start_advanced" and e["broker"] == away and e.get("truncated_fully")
    ]
    assert events and events[0]["topic"] == topic
    cluster.kill(leader)
    new_leader(cluster, topic, leader)
    first = earliest_offset(cluster, topic)
    assert first >= start
    assert offsets_from_earliest(cluster, topic, 420) == list(range(first, 420))
