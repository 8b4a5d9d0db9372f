"""Reading what a consumer of a given isolation level sees, with real clients.

A test that asserts "an aborted record is never seen" must know when it has seen
everything: each helper reads until a *sentinel* record (written last, committed) has
arrived on every partition, so the absence of a record is a real observation, not the
end of a timeout.
"""

from __future__ import annotations

import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from kafka import KafkaConsumer
from kafka import TopicPartition as KTopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kio.schema.find_coordinator.v3.request import FindCoordinatorRequest

from kafkalite.cluster import Cluster
from tests.support.raw import RawConnection
from tests.support.waiting import wait_for

SENTINEL = b"__end__"


def write_sentinels(bootstrap: str, topic: str, partitions: int) -> None:
    """A committed, non-transactional last record on every partition."""
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for p in range(partitions):
        producer.produce(topic, SENTINEL, partition=p)
    assert producer.flush(30) == 0


def confluent_read(
    bootstrap: str, topic: str, partitions: int, isolation: str, timeout_s: float = 30
) -> dict[int, list[bytes]]:
    """Values per partition, read by librdkafka with ``isolation.level`` up to the sentinel."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{topic}-{isolation}",
            "isolation.level": isolation,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    seen: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
    done: set[int] = set()
    deadline = time.monotonic() + timeout_s
    try:
        while len(done) < partitions:
            assert time.monotonic() < deadline, f"no sentinel on {set(seen) - done}: {seen}"
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                raise KafkaException(msg.error())
            if msg.value() == SENTINEL:
                done.add(msg.partition())
            else:
                seen[msg.partition()].append(msg.value())
    finally:
        consumer.close()
    return seen


def kafka_python_read(
    bootstrap: str, topic: str, partitions: int, isolation: str, timeout_s: float = 30
) -> dict[int, list[bytes]]:
    """The same with kafka-python's consumer."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        isolation_level=isolation,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    consumer.assign([KTopicPartition(topic, p) for p in range(partitions)])
    seen: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
    done: set[int] = set()
    deadline = time.monotonic() + timeout_s
    try:
        while len(done) < partitions:
            assert time.monotonic() < deadline, f"no sentinel on {set(seen) - done}: {seen}"
            for tp, records in consumer.poll(timeout_ms=500).items():
                for record in records:
                    if record.value == SENTINEL:
                        done.add(tp.partition)
                    else:
                        seen[tp.partition].append(record.value)
    finally:
        consumer.close()
    return seen


def coordinator_of(bootstrap: str, transactional_id: str) -> str:
    """``host:port`` of the transactional id's coordinator (FindCoordinator, key type 1)."""
    with RawConnection(bootstrap) as conn:
        deadline = time.monotonic() + 20
        while True:
            response = conn.request(FindCoordinatorRequest(key=transactional_id, key_type=1))
            if response.error_code == 0:
                return f"{response.host}:{response.port}"
            assert time.monotonic() < deadline, f"no coordinator: {response}"
            time.sleep(0.1)


def wait_hosted(cluster: Cluster, topic: str, partitions: int = 1, timeout_s: float = 30) -> None:
    """Until every replica of the topic's partitions is on its broker, with a leader: any
    broker then knows the topic (a just-created topic is unknown to a broker that has not
    replayed its creation yet, which is right, and not what a test means to check)."""

    def hosted() -> bool:
        found = [p for p in cluster.status()["partitions"] if p["topic"] == topic]
        return len(found) == partitions and all(
            p["leader"] is not None and all(r["log_end_offset"] is not None for r in p["replicas"])
            for p in found
        )

    wait_for(hosted, timeout_s, f"{topic} on all its replicas")


def coordinator_broker(cluster: Cluster, transactional_id: str) -> int:
    """The id of the broker coordinating ``transactional_id``."""
    address = coordinator_of(cluster.bootstrap_servers, transactional_id)
    return next(b["id"] for b in cluster.status()["brokers"] if b["address"] == address)


def create_led_topic(
    cluster: Cluster, topic: str, leaders: list[int], replication_factor: int = 3
) -> None:
    """One partition per broker in ``leaders`` order, each led by its first replica (with
    min.insync.replicas 2 when it has more than one), so a test knows which broker to fault."""
    assignment = {
        i: [lead, *(b for b in (1, 2, 3) if b != lead)][:replication_factor]
        for i, lead in enumerate(leaders)
    }
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        admin.create_topics(
            [
                NewTopic(
                    topic,
                    num_partitions=-1,
                    replication_factor=-1,
                    replica_assignments=assignment,
                    topic_configs={"min.insync.replicas": str(min(2, replication_factor))},
                )
            ]
        )
    finally:
        admin.close()
    wait_hosted(cluster, topic, len(leaders))
