"""A topic deleted and created again under the same name is a new topic: a broker that
restarts keeps the new topic's records, and a broker that was down meanwhile drops the old
topic's log instead of taking it for the new one (Kafka tells them apart by topic id).

Found by the labs, which re-create their topics on every run: a restarted broker replayed
the old topic's deletion record by record and deleted the directory that by then held the
new topic's log. A starting broker now replays the metadata log into its image first and
then brings its logs in line with the final image, and each partition directory records
its topic id (``partition.metadata``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import KafkaError

from kafkalite.cluster import Cluster
from tests.support.quorum import controller
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]


def log_of(bootstrap: str, topic: str) -> list[bytes]:
    """Every record of partition 0, read up to its end offset (not until a quiet spell,
    which under load can end before the first fetch does)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    tp = TopicPartition(topic, 0)

    def end_offset() -> tuple[int] | None:
        try:
            return (consumer.end_offsets([tp])[tp],)
        except KafkaError:  # a leader its metadata does not know yet: ask again
            return None

    values: list[bytes] = []
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        (end,) = wait_for(end_offset, 30, f"the end offset of {topic}-0")
        deadline = time.monotonic() + 30
        while consumer.position(tp) < end:
            assert time.monotonic() < deadline, f"read {values} of {topic} up to {end}"
            for records in consumer.poll(timeout_ms=500).values():
                values.extend(r.value for r in records)
    finally:
        consumer.close()
    return values


def leader_of(cluster: Cluster, topic: str) -> int | None:
    rows = [p for p in cluster.status()["partitions"] if p["topic"] == topic]
    return rows[0]["leader"] if rows else None


def test_a_recreated_topic_survives_a_broker_restart(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    bootstrap = cluster.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic("ledger", 1, replica_assignments={0: [1]})])
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    producer.send("ledger", b"old", partition=0).get(timeout=20)
    producer.close()
    admin.delete_topics(["ledger"])
    wait_for(lambda: "ledger" not in admin.list_topics(), what="the deletion")
    admin.create_topics([NewTopic("ledger", 1, replica_assignments={0: [1]})])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i in range(5):
        producer.send("ledger", b"v%d" % i, partition=0).get(timeout=20)
    producer.close()
    cluster.restart(1)  # the only replica: no other copy can heal what it loses
    wait_for(lambda: leader_of(cluster, "ledger") == 1, 30, "broker 1 to lead ledger-0 again")
    assert log_of(bootstrap, "ledger") == [b"v%d" % i for i in range(5)]


def test_a_broker_down_while_its_topic_was_recreated_drops_the_old_log(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    bootstrap = cluster.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic("ledger", 1, replica_assignments={0: [1, 2]})])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    producer.send("ledger", b"old", partition=0).get(timeout=20)
    producer.close()
    cluster.stop(1)
    # broker 1 may have been the active controller: kafka-python sends DeleteTopics to the
    # controller the metadata names, so wait until a running broker is it
    wait_for(lambda: controller(cluster), 30, "an active controller among brokers 2 and 3")
    live = ",".join(b.address for b in cluster.spec.brokers if b.broker_id != 1)
    admin = KafkaAdminClient(bootstrap_servers=live)  # clients that never knew broker 1
    admin.delete_topics(["ledger"])
    wait_for(lambda: "ledger" not in admin.list_topics(), what="the deletion")
    # broker 2 first: the new topic's leader must be a running broker
    admin.create_topics([NewTopic("ledger", 1, replica_assignments={0: [2, 1]})])
    admin.close()
    wait_for(lambda: leader_of(cluster, "ledger") == 2, 30, "broker 2 to lead the new ledger-0")
    # broker 1 is listed but down: it joins the ISR only by catching up once it is back
    assert [p["isr"] for p in cluster.status()["partitions"] if p["topic"] == "ledger"] == [[2]]
    producer = KafkaProducer(bootstrap_servers=live, acks=1)  # committed once 1 catches up
    for i in range(3):
        producer.send("ledger", b"new-%d" % i, partition=0).get(timeout=20)
    producer.close()
    cluster.start(1)

    def in_sync() -> bool:
        rows = [p for p in cluster.status()["partitions"] if p["topic"] == "ledger"]
        return bool(rows) and sorted(rows[0]["isr"]) == [1, 2]

    wait_for(in_sync, 30, "broker 1 back in the ISR")
    cluster.stop(2)  # broker 1's copy is now the only one, and it leads
    wait_for(lambda: leader_of(cluster, "ledger") == 1, 30, "broker 1 to lead ledger-0")
    assert log_of(bootstrap, "ledger") == [b"new-0", b"new-1", b"new-2"]
