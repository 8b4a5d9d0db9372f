"""ListOffsets "latest" never goes backwards across a failover.

A new leader's high watermark is what it last heard from the old leader, which can lag
what the old leader had already answered: a consumer or a Spark query asking for the end
of the log right after the failover was told an offset below one it had been told before.
Kafka answers OFFSET_NOT_AVAILABLE until the new leader's HW reaches the offset its epoch
began at (``Partition.fetchOffsetForTimestamp``); clients ask again. The followers' fetching
is slowed (the lab's ``slow`` fault, with ``replica.lag.time.max.ms`` raised so that the
slowed followers stay in the ISR) so that the new leader's HW lags for seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from confluent_kafka import Producer
from kafka import KafkaConsumer, TopicPartition
from kafka.errors import KafkaError

from kafkalite.cluster import Cluster
from tests.integration.test_replication import create_topic, fully_replicated, partition
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]

SLOW_MS = 1000


def latest(consumer: KafkaConsumer, tp: TopicPartition) -> int | None:
    """kafka-python's end offset (ListOffsets latest); None when it gave up asking."""
    try:
        return int(consumer.end_offsets([tp])[tp])
    except KafkaError:
        return None


def test_the_latest_offset_does_not_go_back_after_a_failover(
    make_cluster3: Callable[..., Cluster],
) -> None:
    """The followers have the last record (acks=all) but not yet the HW that covers it:
    the leader's answer carrying it is held by the slowed links, then cut off for good by
    isolating and killing the leader. The new leader's HW is one behind what the old
    leader answered ListOffsets with, until the other follower fetches from it."""
    cluster = make_cluster3(**{"replica.lag.time.max.ms": "30000"})
    topic = create_topic(cluster, **{"min.insync.replicas": "2"})
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all"})
    for i in range(10):
        producer.produce(topic, b"%d" % i)
    assert producer.flush(30) == 0
    before = wait_for(lambda: fully_replicated(cluster, topic), what="replicated")
    leader = before["leader"]
    for follower in (r for r in before["isr"] if r != leader):
        cluster.slow(follower, SLOW_MS)  # each answer reaches them SLOW_MS late
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=5000)
    tp = TopicPartition(topic, 0)
    try:
        producer.produce(topic, b"10")
        assert producer.flush(30) == 0  # in both followers' logs: the leader's HW is 11
        acked = time.monotonic()
        cluster.isolate(leader)  # the answers telling the followers HW 11 are held
        assert time.monotonic() - acked < SLOW_MS / 1000, "isolated too late to hold the HW"
        told = latest(consumer, tp)  # clients still reach it
        assert told == 11
        cluster.kill(leader)
        wait_for(
            lambda: partition(cluster, topic)["leader"] not in (None, leader),
            timeout_s=60,
            what="a new leader",
        )
        answers: list[int | None] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not answers or answers[-1] != told):
            answers.append(latest(consumer, tp))
        went_back = [a for a in answers if a is not None and a < told]
        assert not went_back, f"latest went back from {told} to {went_back[:3]}"
        assert told in answers, f"the end was never found again: {answers}"
    finally:
        consumer.close()
        cluster.heal()
