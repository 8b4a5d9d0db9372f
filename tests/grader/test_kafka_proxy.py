"""The grader's Kafka proxy, with real clients on a real cluster: both client libraries go
through it (every broker address they are handed is the proxy's), each durable request is
seen and named, and a request the gate refuses never reaches the cluster."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from grader.crash_points import CrashPoint
from grader.gate import StepGate
from grader.kafka_proxy import KafkaProxy
from kafkalite.cluster import Cluster
from tests.support.topics import create_topic

pytestmark = [pytest.mark.grader, pytest.mark.interop]


@pytest.fixture
def proxied(cluster3: Cluster) -> Iterator[tuple[KafkaProxy, StepGate]]:
    gate = StepGate()
    proxy = KafkaProxy({b.broker_id: (b.host, b.port) for b in cluster3.spec.brokers}, gate)
    proxy.start()
    yield proxy, gate
    proxy.stop()


def test_both_clients_go_through_the_proxy_and_their_steps_are_named(
    cluster3: Cluster, proxied: tuple[KafkaProxy, StepGate], topic: str
) -> None:
    proxy, gate = proxied
    create_topic(cluster3.bootstrap_servers, topic, partitions=2, rf=3)
    gate.open_run(None, lambda: None)
    producer = KafkaProducer(bootstrap_servers=proxy.bootstrap_servers, acks="all")
    for i in range(6):
        producer.send(topic, b"v%d" % i, partition=i % 2)
    producer.flush()
    addresses = {f"{n.host}:{n.port}" for n in producer._metadata.brokers()}
    producer.close()
    assert addresses == set(proxy.bootstrap_servers.split(","))
    consumer = KafkaConsumer(
        bootstrap_servers=proxy.bootstrap_servers,
        group_id=f"g-{topic}",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        consumer_timeout_ms=3000,
    )
    consumer.assign([TopicPartition(topic, 0)])
    assert len(list(consumer)) == 3
    consumer.commit()
    consumer.close()
    rdkafka = Producer({"bootstrap.servers": proxy.bootstrap_servers, "transactional.id": topic})
    rdkafka.init_transactions(60)
    rdkafka.begin_transaction()
    rdkafka.produce(topic, b"in-a-transaction", partition=1)
    rdkafka.commit_transaction(60)
    steps = gate.close_run().steps
    labels = [step.label for step in steps]
    # a label names no topic (occurrences count by it, and each trial of a search may
    # write to a fresh topic); the topic is in the step's detail
    assert steps[-2].detail == f"1 record to {topic}"
    assert labels.count("write") >= 2  # one produce request per partition leader
    assert "consumer.commit()" in labels
    assert labels[-2:] == ["transactional write", "producer.commit_transaction()"]


def test_a_refused_request_never_reaches_the_cluster(
    cluster3: Cluster, proxied: tuple[KafkaProxy, StepGate], topic: str
) -> None:
    proxy, gate = proxied
    create_topic(cluster3.bootstrap_servers, topic, partitions=1, rf=3)
    killed = []
    gate.open_run(CrashPoint("write", 2), lambda: killed.append(True))
    producer = KafkaProducer(
        bootstrap_servers=proxy.bootstrap_servers, acks="all", retries=0, linger_ms=0
    )
    producer.send(topic, b"first").get(timeout=30)
    future = producer.send(topic, b"second")
    with contextlib.suppress(Exception):
        future.get(timeout=10)
    producer.close(timeout=5)
    assert killed == [True]
    assert gate.close_run().killed_at == CrashPoint("write", 2)
    proxy.cut_all()
    reader = Consumer(
        {
            "bootstrap.servers": cluster3.bootstrap_servers,
            "group.id": f"r-{topic}",
            "auto.offset.reset": "earliest",
        }
    )
    reader.subscribe([topic])
    values = []
    for _ in range(20):
        message = reader.poll(0.5)
        if message is not None and message.error() is None:
            values.append(message.value())
    reader.close()
    assert values == [b"first"]
