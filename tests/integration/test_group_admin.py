"""Consumer-group administration and the group features Kafka users expect, with the real
clients: DeleteGroups, OffsetDelete, OffsetCommit to a topic that does not exist, static
membership (KIP-345) and ``group.initial.rebalance.delay.ms``."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException
from confluent_kafka import TopicPartition as CTP
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.errors import GroupIdNotFoundError, NonEmptyGroupError
from kafka.structs import OffsetAndMetadata

from kafkalite.cluster import Cluster
from tests.conftest import LAB_CONFIGS
from tests.support.ports import free_base_port
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow, pytest.mark.xdist_group("heavy")]

UNKNOWN_TOPIC_OR_PARTITION = 3
GROUP_SUBSCRIBED_TO_TOPIC = 86


@pytest.fixture
def group() -> str:
    return f"g-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def kadmin(bootstrap: str) -> Iterator[KafkaAdminClient]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        yield admin
    finally:
        admin.close()


def _consumer(bootstrap: str, group: str, **config: object) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 300,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            **config,
        }
    )


def _poll_until_assigned(consumer: Consumer, count: int = 1) -> list[CTP]:
    def assigned() -> list[CTP] | None:
        consumer.poll(0.1)
        return consumer.assignment() if len(consumer.assignment()) >= count else None

    return wait_for(assigned, what="an assignment")


def _commit(admin: KafkaAdminClient, group: str, offsets: dict[tuple[str, int], int]) -> None:
    admin.alter_group_offsets(
        group,
        {TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()},
    )


def test_offset_commit_to_a_topic_that_does_not_exist(
    bootstrap: str, topic: str, group: str
) -> None:
    create_topic(bootstrap, topic, 1, 1)
    consumer = _consumer(bootstrap, group)
    try:
        with pytest.raises(KafkaException) as caught:
            consumer.commit(
                offsets=[CTP(topic, 0, 5), CTP("no-such-topic-" + group, 0, 5)],
                asynchronous=False,
            )
        committed = caught.value.args[0]
        assert committed.code() == UNKNOWN_TOPIC_OR_PARTITION
        # the partition that exists was committed all the same
        assert consumer.committed([CTP(topic, 0)], timeout=10)[0].offset == 5
    finally:
        consumer.close()


def test_delete_groups_with_kafka_python(bootstrap: str, kadmin, topic: str, group: str) -> None:
    create_topic(bootstrap, topic, 1, 1)
    _commit(kadmin, group, {(topic, 0): 3})
    member = _consumer(bootstrap, f"{group}-busy")
    member.subscribe([topic])
    _poll_until_assigned(member)
    try:
        results = dict(kadmin.delete_groups([group, f"{group}-busy", f"{group}-nobody"]))
    finally:
        member.close()
    assert results == {
        group: "OK",
        f"{group}-busy": NonEmptyGroupError.__name__,
        f"{group}-nobody": GroupIdNotFoundError.__name__,
    }
    assert kadmin.list_group_offsets(group)[group] == {}


def test_delete_groups_with_confluent_kafka(bootstrap: str, kadmin, topic: str, group: str) -> None:
    create_topic(bootstrap, topic, 1, 1)
    _commit(kadmin, group, {(topic, 0): 3})
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.delete_consumer_groups([group], request_timeout=10)[group].result(10)
    listed = [g.group_id for g in admin.list_consumer_groups(request_timeout=10).result().valid]
    assert group not in listed
    with pytest.raises(KafkaException, match="GROUP_ID_NOT_FOUND"):
        admin.delete_consumer_groups([group], request_timeout=10)[group].result(10)


def test_offset_delete_keeps_what_the_group_still_consumes(
    bootstrap: str, kadmin, group: str
) -> None:
    consumed, abandoned = f"{group}-consumed", f"{group}-abandoned"
    for name in (consumed, abandoned):
        create_topic(bootstrap, name, 1, 1)
    member = _consumer(bootstrap, group)
    member.subscribe([consumed])
    _poll_until_assigned(member)
    try:
        member.commit(offsets=[CTP(consumed, 0, 1), CTP(abandoned, 0, 7)], asynchronous=False)
        results = kadmin.delete_group_offsets(
            group, [TopicPartition(consumed, 0), TopicPartition(abandoned, 0)]
        )
        errors = {tp.topic: getattr(e, "errno", 0) for tp, e in dict(results).items()}
        assert errors == {consumed: GROUP_SUBSCRIBED_TO_TOPIC, abandoned: 0}
        left = kadmin.list_group_offsets(group)[group]
        assert set(left) == {TopicPartition(consumed, 0)}
    finally:
        member.close()


def _rebalances(cluster: Cluster, group: str) -> list[dict]:
    return [e for e in cluster.events() if e["type"] == "group_rebalanced" and e["group"] == group]


def test_a_static_member_restarts_without_rebalancing_the_others(
    cluster: Cluster, topic: str, group: str
) -> None:
    bootstrap = cluster.bootstrap_servers
    create_topic(bootstrap, topic, 4, 1)
    static = {"session.timeout.ms": 20000}
    a = _consumer(bootstrap, group, **{"group.instance.id": "a", **static})
    b = _consumer(bootstrap, group, **{"group.instance.id": "b", **static})
    a.subscribe([topic])
    b.subscribe([topic])
    wait_for(
        lambda: [c.poll(0.05) for c in (a, b)] and len(a.assignment()) == len(b.assignment()) == 2,
        what="4 partitions split between a and b",
    )
    before = sorted(p.partition for p in a.assignment())
    rebalances = len(_rebalances(cluster, group))
    a.close()  # a static member sends no LeaveGroup: its place waits for it
    restarted = _consumer(bootstrap, group, **{"group.instance.id": "a", **static})
    restarted.subscribe([topic])
    try:
        after = sorted(p.partition for p in _poll_until_assigned(restarted))
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:  # b keeps polling: it would see a rebalance now
            b.poll(0.1)
            restarted.poll(0.1)
        assert after == before
        assert len(_rebalances(cluster, group)) == rebalances
        rejoined = [e for e in cluster.events() if e["type"] == "static_member_rejoined"]
        assert any(e["group"] == group and e["group_instance_id"] == "a" for e in rejoined)
    finally:
        restarted.close()
        b.close()


def test_initial_rebalance_delay_assigns_consumers_that_start_together_at_once(
    tmp_path: Path, topic: str, group: str
) -> None:
    cluster = Cluster.up(
        tmp_path / "cluster",
        base_port=free_base_port(1),
        configs={**LAB_CONFIGS, "group.initial.rebalance.delay.ms": "3000"},
    )
    bootstrap = cluster.bootstrap_servers
    try:
        create_topic(bootstrap, topic, 2, 1)
        first = _consumer(bootstrap, group)
        first.subscribe([topic])
        started = time.monotonic()
        while time.monotonic() - started < 1:  # the second consumer starts a second later
            first.poll(0.1)
        second = _consumer(bootstrap, group)
        second.subscribe([topic])
        wait_for(
            lambda: (
                [c.poll(0.05) for c in (first, second)]
                and len(first.assignment()) == len(second.assignment()) == 1
            ),
            what="one partition each",
        )
        first.close()
        second.close()
        rebalances = _rebalances(cluster, group)
        assert len(rebalances[0]["members"]) == 2  # the first rebalance already had both
        assert time.monotonic() - started >= 3  # and it waited for the second one
    finally:
        cluster.down()


def test_a_cooperative_consumer_survives_the_deletion_of_one_of_its_topics(
    bootstrap: str, kadmin, group: str
) -> None:
    """What Kafka reports for a deleted topic: its partitions leave the assignment, commits
    to it are refused and its committed offsets are forgotten; the consumer keeps reading
    the other topic and closes at once."""
    kept, deleted = f"{group}-kept", f"{group}-deleted"
    for name in (kept, deleted):
        create_topic(bootstrap, name, 2, 1)
    consumer = _consumer(
        bootstrap,
        group,
        **{
            "partition.assignment.strategy": "cooperative-sticky",
            "topic.metadata.refresh.interval.ms": 500,
        },
    )
    consumer.subscribe([kept, deleted])
    _poll_until_assigned(consumer, 4)
    consumer.commit(offsets=[CTP(kept, 0, 1), CTP(deleted, 0, 1)], asynchronous=False)
    try:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.delete_topics([deleted])[deleted].result(10)
        remaining = wait_for(
            lambda: (
                (consumer.poll(0.1) or True)
                and {p.topic for p in consumer.assignment()} == {kept}
                and consumer.assignment()
            ),
            what=f"only {kept} assigned",
        )
        assert len(remaining) == 2
        offsets = kadmin.list_group_offsets(group)[group]
        assert set(offsets) == {TopicPartition(kept, 0)}
        with pytest.raises(KafkaException):
            consumer.commit(offsets=[CTP(deleted, 0, 2)], asynchronous=False)
    finally:
        started = time.monotonic()
        consumer.close()
    assert time.monotonic() - started < 10


def test_a_kafka_python_static_member_takes_its_place_back(
    cluster: Cluster, topic: str, group: str
) -> None:
    bootstrap = cluster.bootstrap_servers
    create_topic(bootstrap, topic, 2, 1)

    def start() -> KafkaConsumer:
        consumer = KafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=group,
            group_instance_id="lab-member",
            session_timeout_ms=20_000,
            heartbeat_interval_ms=300,
            enable_auto_commit=False,
        )
        # Each poll long enough for a whole join: kafka-python 3.0.12 joins before it has the
        # topic's metadata, assigns nothing, and joins again once the metadata comes; if a
        # poll's timeout ends while that second join is in flight, the assignment it brings
        # is never applied (its need_rejoin() is False from then on: the client's bug).
        wait_for(
            lambda: consumer.poll(timeout_ms=2000) is not None and consumer.assignment(),
            30,
            "assigned",
        )
        return consumer

    first = start()
    before = sorted(p.partition for p in first.assignment())
    first.close()  # a static member leaves no LeaveGroup behind: its place is kept
    again = start()
    try:
        assert sorted(p.partition for p in again.assignment()) == before == [0, 1]
    finally:
        again.close()
    # It took its old place back under a new member id. (Whether a rebalance follows is up
    # to kafka-python: right after a join it may rejoin once when its metadata snapshot
    # changes, at every start, restarted or not; the confluent-kafka test above checks
    # that a restart alone rebalances nobody.)
    rejoined = [e for e in cluster.events() if e["type"] == "static_member_rejoined"]
    assert [e["group_instance_id"] for e in rejoined if e["group"] == group] == ["lab-member"]
