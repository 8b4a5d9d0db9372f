"""Placing and moving partitions with the admin clients, on three real brokers:
CreatePartitions with a replica assignment, reassignments (a new replica catches up, joins
the ISR, and only then does the old one leave and delete its copy), and preferred-leader
elections through kafka-python's and confluent-kafka's ``elect_leaders``."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import ElectionType, Producer
from confluent_kafka import TopicPartition as CTP
from confluent_kafka.admin import AdminClient, NewPartitions, OffsetSpec
from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import NewTopic

from kafkalite.cluster import Cluster
from kafkalite.protocol.errors import ErrorCode
from tests.conftest import LAB_CONFIGS
from tests.support.ports import free_base_port
from tests.support.raw import RawConnection, list_offsets_request
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]

RECORDS = 2000


@pytest.fixture(scope="module")
def brokers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Three brokers that leave leadership where elections put it (no automatic
    preferred-leader rebalance), so a test can watch an election it asked for."""
    cluster = Cluster.up(
        tmp_path_factory.mktemp("partition-admin"),
        brokers=3,
        base_port=free_base_port(3),
        configs={**LAB_CONFIGS, "auto.leader.rebalance.enable": "false"},
    )
    try:
        yield cluster
    finally:
        cluster.down()


@pytest.fixture
def kadmin(brokers: Cluster) -> Iterator[KafkaAdminClient]:
    admin = KafkaAdminClient(bootstrap_servers=brokers.bootstrap_servers)
    try:
        yield admin
    finally:
        admin.close()


def _topic(kadmin: KafkaAdminClient, assignment: dict[int, list[int]]) -> str:
    name = f"pa-{uuid.uuid4().hex[:8]}"
    kadmin.create_topics(
        [NewTopic(name, replica_assignments=assignment, num_partitions=-1, replication_factor=-1)]
    )
    return name


def _row(cluster: Cluster, topic: str, index: int = 0) -> dict[str, Any] | None:
    rows = [
        p for p in cluster.status()["partitions"] if p["topic"] == topic and p["partition"] == index
    ]
    return rows[0] if rows else None


def _replicas(cluster: Cluster, topic: str, index: int = 0) -> list[int] | None:
    row = _row(cluster, topic, index)
    return None if row is None else [r["broker"] for r in row["replicas"]]


def _produce(cluster: Cluster, topic: str) -> None:
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all"})
    for i in range(RECORDS):
        producer.produce(topic, b"v" * 500 + b"%d" % i, partition=0)
    assert producer.flush(30) == 0


def _events(cluster: Cluster, kind: str, topic: str) -> list[dict[str, Any]]:
    return [e for e in cluster.events() if e["type"] == kind and e.get("topic") == topic]


def test_create_partitions_places_them_where_asked(brokers: Cluster, kadmin) -> None:
    topic = _topic(kadmin, {0: [1, 2]})
    kadmin.create_partitions({topic: {"count": 2, "assignments": [[3, 1]]}})
    admin = AdminClient({"bootstrap.servers": brokers.bootstrap_servers})
    admin.create_partitions([NewPartitions(topic, 3, replica_assignment=[[2, 3]])])[topic].result(
        10
    )
    placed = wait_for(
        lambda: (
            all(_row(brokers, topic, i) for i in range(3))
            and [_replicas(brokers, topic, i) for i in range(3)]
        ),
        what="three partitions in status",
    )
    assert placed == [[1, 2], [3, 1], [2, 3]]


def test_moving_a_replica_adds_the_new_one_before_removing_the_old(
    brokers: Cluster, kadmin
) -> None:
    topic = _topic(kadmin, {0: [1, 2]})
    _produce(brokers, topic)
    tp = TopicPartition(topic, 0)
    brokers.slow(3, 300)  # broker 3 catches up slowly: the move can be watched under way
    try:
        assert kadmin.alter_partition_reassignments({tp: [1, 3]}) == {tp: None}
        ongoing = kadmin.list_partition_reassignments([tp])
        assert ongoing[tp] == {
            "replicas": [1, 3, 2],
            "adding_replicas": [3],
            "removing_replicas": [2],
        }
        row = wait_for(
            lambda: (r := _row(brokers, topic)) and r["adding_replicas"] == [3] and r,
            what="the move in status",
        )
        assert row["removing_replicas"] == [2]
        assert 2 in row["isr"]  # the old replica stays in sync while the new one catches up
    finally:
        brokers.heal(3)
    moved = wait_for(
        lambda: _replicas(brokers, topic) == [1, 3] and _row(brokers, topic),
        what="the move to complete",
    )
    assert moved["isr"] == [1, 3]
    assert kadmin.list_partition_reassignments() == {}
    started = _events(brokers, "reassignment_started", topic)
    assert [(e["target"], e["adding"], e["removing"]) for e in started] == [([1, 3], [3], [2])]
    joined = _events(brokers, "isr_expanded", topic)
    assert any(e["added"] == [3] for e in joined)
    completed = wait_for(lambda: _events(brokers, "reassignment_completed", topic), what="done")
    assert (completed[0]["replicas"], completed[0]["removed"]) == ([1, 3], [2])
    deleted = wait_for(lambda: _events(brokers, "replica_deleted", topic), what="2's copy gone")
    assert [e["broker"] for e in deleted] == [2]
    assert max(e["time_ms"] for e in joined) <= completed[0]["time_ms"]
    # broker 2 no longer has the partition: a client that asks it is sent elsewhere
    # (NOT_LEADER_OR_FOLLOWER refreshes its metadata), as Kafka answers
    with RawConnection(brokers.spec.broker(2).address) as conn:
        answer = conn.request(list_offsets_request(topic)).topics[0].partitions[0]
    assert answer.error_code == ErrorCode.not_leader_or_follower
    # every record is on the new replica set: the new leader-to-be has all of them
    admin = AdminClient({"bootstrap.servers": brokers.bootstrap_servers})
    offsets = admin.list_offsets({CTP(topic, 0): OffsetSpec.latest()})
    assert offsets[CTP(topic, 0)].result(10).offset == RECORDS


def test_a_removed_leader_hands_over_and_the_move_can_be_cancelled(
    brokers: Cluster, kadmin
) -> None:
    topic = _topic(kadmin, {0: [1, 2]})
    _produce(brokers, topic)
    tp = TopicPartition(topic, 0)
    kadmin.alter_partition_reassignments({tp: [2, 3]})
    wait_for(
        lambda: _replicas(brokers, topic) == [2, 3] and _row(brokers, topic)["leader"] == 2,
        what="the move to complete, 2 leading",
    )
    handed_over = _events(brokers, "leader_elected", topic)
    assert [e["broker"] for e in handed_over][-1] == 2
    brokers.slow(1, 300)
    try:
        kadmin.alter_partition_reassignments({tp: [2, 1]})
        assert kadmin.alter_partition_reassignments({tp: None}) == {tp: None}  # cancel
    finally:
        brokers.heal(1)
    assert wait_for(lambda: _replicas(brokers, topic), what="status") == [2, 3]
    assert kadmin.list_partition_reassignments() == {}
    cancelled = _events(brokers, "reassignment_completed", topic)
    assert cancelled[-1]["cancelled"] is True


def test_preferred_leader_election_with_both_admin_clients(brokers: Cluster, kadmin) -> None:
    topic = _topic(kadmin, {0: [1, 2, 3], 1: [1, 2, 3]})
    for index in (0, 1):
        wait_for(lambda i=index: (r := _row(brokers, topic, i)) and len(r["isr"]) == 3, what="isr")
    # reorder the replicas: broker 2 becomes the preferred leader, broker 1 still leads
    kadmin.alter_partition_reassignments(
        {TopicPartition(topic, 0): [2, 1, 3], TopicPartition(topic, 1): [3, 1, 2]}
    )
    assert [_row(brokers, topic, i)["leader"] for i in (0, 1)] == [1, 1]
    kadmin.elect_leaders(0, {topic: [0]})
    wait_for(lambda: _row(brokers, topic, 0)["leader"] == 2, what="2 leads partition 0")
    admin = AdminClient({"bootstrap.servers": brokers.bootstrap_servers})
    result = admin.elect_leaders(ElectionType.PREFERRED, [CTP(topic, 1)]).result(10)
    assert result[CTP(topic, 1)] is None  # no error
    wait_for(lambda: _row(brokers, topic, 1)["leader"] == 3, what="3 leads partition 1")
