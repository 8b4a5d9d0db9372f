"""A consumer's long poll is answered as soon as the high watermark passes new records.

Seen before the fix: a follower's fetch that moved the high watermark woke the producers
waiting for acks=all but not the consumers' fetches waiting for data below the high
watermark, so with replication every consumer waited its whole ``fetch.wait.max.ms``
(librdkafka and kafka-python: 500 ms) for records already committed.
"""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from kafkalite.cluster import Cluster
from tests.support.topics import create_topic

pytestmark = pytest.mark.interop

WAIT_MAX_MS = 10_000  # a consumer that is not woken waits this long


def test_a_waiting_consumer_gets_a_replicated_record_before_its_wait_ends(
    cluster3: Cluster,
) -> None:
    topic = f"long-poll-{uuid.uuid4().hex[:8]}"
    create_topic(cluster3.bootstrap_servers, topic, 1, 3)
    consumer = Consumer(
        {
            "bootstrap.servers": cluster3.bootstrap_servers,
            "group.id": topic,
            "fetch.wait.max.ms": WAIT_MAX_MS,
            "fetch.min.bytes": 1,
            "enable.auto.commit": False,
        }
    )
    producer = Producer({"bootstrap.servers": cluster3.bootstrap_servers, "acks": "all"})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        assert consumer.poll(2) is None  # empty: its next fetch now waits at the leader
        delays = []
        for i in range(3):
            producer.produce(topic, b"%d" % i)
            producer.flush(30)
            acked = time.monotonic()
            message = consumer.poll(WAIT_MAX_MS / 1000 + 10)
            assert message is not None and message.error() is None, message
            delays.append(time.monotonic() - acked)
        assert max(delays) < WAIT_MAX_MS / 2000, f"seconds from ack to read: {delays}"
    finally:
        consumer.close()
