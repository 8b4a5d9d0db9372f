"""A partial partition: a leader cut from its followers that still reaches the controller.

The 2013 Jepsen analysis of Kafka 0.8: the followers cannot fetch, the leader (still in
touch with the controller, so never fenced) shrinks the ISR to itself and goes on
acknowledging ``acks=all`` writes alone; when it then dies, only an unclean election
brings the partition back, without those writes. ``min.insync.replicas=2`` refuses them
instead. Checked on real brokers with kafka-python, the leader really killed.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError

from kafkalite.cluster import BrokerState, Cluster
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]


def partition(cluster: Cluster, topic: str) -> dict[str, Any]:
    rows = [p for p in cluster.status()["partitions"] if p["topic"] == topic]
    return rows[0] if rows else {"leader": None, "isr": []}


def answers(producer: KafkaProducer, topic: str, count: int) -> list[str]:
    """``acked`` or the error's name for each of ``count`` writes, one after the other."""
    said = []
    for i in range(count):
        try:
            producer.send(topic, b"alone-%d" % i).get(timeout=20)
            said.append("acked")
        except KafkaError as error:
            said.append(type(error).__name__)
    return said


@pytest.mark.parametrize(
    ("min_insync", "expected"),
    [("1", ["acked"] * 3), ("2", ["NotEnoughReplicasError"] * 2)],
    ids=["min-insync-1-acknowledges-alone", "min-insync-2-refuses"],
)
def test_a_leader_cut_from_its_followers_shrinks_the_isr_and_stays_leader(
    make_cluster3: Callable[..., Cluster], min_insync: str, expected: list[str]
) -> None:
    cluster = make_cluster3()
    topic = f"partial-{uuid.uuid4().hex[:6]}"
    create_topic(cluster.bootstrap_servers, topic, 1, 3, {"min.insync.replicas": min_insync})
    full = wait_for(lambda: len((p := partition(cluster, topic))["isr"]) == 3 and p, what="ISR 3")
    leader = full["leader"]
    producer = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers, acks="all", retries=0, request_timeout_ms=15000
    )
    producer.send(topic, b"before").get(timeout=20)

    cluster.partial_partition(leader)
    assert cluster.broker_states()[leader] == BrokerState.RUNNING
    assert cluster.status()["brokers"][leader - 1]["partial_partition"] is True
    # the first write waits for followers that cannot fetch it, until the leader drops them
    first = answers(producer, topic, 1)
    shrunk = wait_for(
        lambda: (p := partition(cluster, topic))["isr"] == [leader] and p, 30, "ISR of one"
    )
    assert shrunk["leader"] == leader, "it still reaches the controller: it is not fenced"
    if min_insync == "1":
        assert first == ["acked"]  # acknowledged by the leader alone
    else:  # appended, then the ISR shrank below 2: committed on one replica, not acknowledged
        assert first == ["NotEnoughReplicasAfterAppendError"]
    assert answers(producer, topic, len(expected)) == expected
    producer.close()

    # the leader dies: its followers are out of the ISR, so a clean election waits for it
    cluster.kill(leader)
    offline = wait_for(
        lambda: (p := partition(cluster, topic))["leader"] is None and p, 30, "partition offline"
    )
    assert offline["isr"] == [leader], "a clean election waits for the last in-sync replica"
    # the operator brings it back with an unclean election: what the leader took alone is gone
    survivor = next(b for b in (1, 2, 3) if b != leader)
    admin = AdminClient({"bootstrap.servers": cluster.spec.broker(survivor).address})
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    resource.add_incremental_config(
        ConfigEntry(
            "unclean.leader.election.enable", "true", incremental_operation=AlterConfigOpType.SET
        )
    )
    admin.incremental_alter_configs([resource])[resource].result(timeout=20)
    wait_for(lambda: partition(cluster, topic)["leader"] not in (None, leader), 30, "new leader")
    # healed only now: the dead leader's answers to the followers' last Fetches, held by the
    # cut links, reach no one (the followers closed those connections when the new leader
    # was elected); healed earlier, they would be appended by followers still following it
    cluster.heal()
    assert not any(b["partial_partition"] for b in cluster.status()["brokers"])
    assert read_all(cluster, topic) == [b"before"]  # "alone-*": acknowledged (or not), lost


def read_all(cluster: Cluster, topic: str) -> list[bytes]:
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, consumer_timeout_ms=3000)
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    values = [record.value for record in consumer]
    consumer.close()
    return values
