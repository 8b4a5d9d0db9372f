"""Deleted records stay deleted: followers honour their leader's log start offset.

DeleteRecords and retention move the leader's log start. A follower must follow it (Kafka's
fetcher advances its log start from every fetch response), or the records come back when
it leads; and a follower whose whole log lies below the leader's log start must empty its
log and restart there, instead of asking for offsets the leader no longer has forever.
Three real brokers, a real kill, kafka-python and confluent-kafka.
"""

from __future__ import annotations

import shutil
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer
from confluent_kafka import TopicPartition as CkTopicPartition
from kafka import KafkaAdminClient, KafkaConsumer
from kafka import TopicPartition as KpTopicPartition

from kafkalite.cluster import Cluster
from kafkalite.protocol.record_batch import iter_batches
from tests.integration.test_replication import create_topic, fully_replicated, partition
from tests.support.topics import create_topic as create
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


def batch_bounds(cluster: Cluster, broker_id: int, topic: str) -> list[tuple[int, int]]:
    """(base offset, last offset) of each batch in the broker's first segment of partition 0."""
    segment = Path(cluster.spec.broker(broker_id).data_dir) / "logs" / f"{topic}-0"
    data = (segment / f"{0:020d}.log").read_bytes()
    return [(h.base_offset, h.last_offset) for _, h in iter_batches(data)]


def keep_producing(
    cluster: Cluster, topic: str, partitions: int, stop: threading.Event, rounds: list[int]
) -> None:
    """acks=all writes to every partition of ``topic``, one round at a time, until ``stop``;
    ``rounds`` gets one entry per round acknowledged in full."""
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all"})
    while not stop.is_set():
        for index in range(partitions):
            producer.produce(topic, b"x", partition=index)
        if producer.flush(10) == 0:
            rounds.append(len(rounds))


def test_an_empty_follower_rejoins_when_the_log_start_lies_inside_a_batch(
    make_cluster3: Callable[..., Cluster],
) -> None:
    """DeleteRecords to the middle of a batch, then a follower that lost its copy of the
    partition returns empty: its leader tells it to start at 15 and then sends the batch
    10..19 whole, as it does to every reader. Kafka's follower starts its log at the
    batch's base offset. Before, it refused the batch forever, the error left its fetch
    loop, and every partition it fetched after this one from the same leader stopped too
    (the topic names sort so that ``busy`` comes after ``deleted``): they fell out of their
    ISRs while acks=all producers kept writing to them."""
    cluster = make_cluster3()
    stamp = uuid.uuid4().hex[:8]
    deleted, busy, busy_partitions = f"a-deleted-{stamp}", f"b-busy-{stamp}", 6
    create(cluster.bootstrap_servers, deleted, 1, 3, {"min.insync.replicas": "1"})
    create(cluster.bootstrap_servers, busy, busy_partitions, 3, {"min.insync.replicas": "1"})
    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap_servers, "acks": "all", "linger.ms": 1000}
    )
    for first in (0, 10):  # two batches: offsets 0..9 and 10..19
        for i in range(first, first + 10):
            producer.produce(deleted, b"%d" % i, partition=0)
        assert producer.flush(30) == 0
    p = wait_for(lambda: fully_replicated(cluster, deleted), what="replicated")
    leader = p["leader"]
    assert batch_bounds(cluster, leader, deleted) == [(0, 9), (10, 19)]
    victim = next(r["broker"] for r in p["replicas"] if r["broker"] != leader)
    shared = [i for i in range(busy_partitions) if partition(cluster, busy, i)["leader"] == leader]
    assert shared, f"no partition of {busy} is led by {leader}, the leader of {deleted}"

    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        admin.delete_records({KpTopicPartition(deleted, 0): 15})  # kafka-python: students'
    finally:
        admin.close()

    stop, rounds = threading.Event(), list[int]()
    writer = threading.Thread(
        target=keep_producing, args=(cluster, busy, busy_partitions, stop, rounds)
    )
    writer.start()
    try:
        cluster.kill(victim)
        shutil.rmtree(Path(cluster.spec.broker(victim).data_dir) / "logs" / f"{deleted}-0")
        cluster.restart(victim)
        wait_for(
            lambda: (
                all(victim in partition(cluster, busy, i)["isr"] for i in shared)
                and victim in partition(cluster, deleted)["isr"]
            ),
            timeout_s=30,
            what=f"broker {victim} back in the ISRs of {deleted} and {busy}",
        )
        rejoined_ms, acked = int(time.time() * 1000), len(rounds)
        # it keeps replicating the busy topic while the writes go on
        wait_for(lambda: len(rounds) >= acked + 20, what="20 more rounds of acks=all writes")
    finally:
        stop.set()
        writer.join(60)
    wait_for(
        lambda: all(fully_replicated(cluster, busy, i) for i in range(busy_partitions)),
        what=f"{busy} replicated",
    )
    view = replica_views(cluster, deleted)[victim]
    assert (view["log_start_offset"], view["log_end_offset"]) == (15, 20)
    left_again = [
        e
        for e in cluster.events()
        if e["type"] == "isr_shrunk" and e["time_ms"] >= rejoined_ms and victim in e["removed"]
    ]
    assert not left_again
    cluster.kill(leader)  # the returned follower can lead: the deleted records stay deleted
    new_leader(cluster, deleted, leader)
    assert offsets_from_earliest(cluster, deleted, 20) == list(range(15, 20))
