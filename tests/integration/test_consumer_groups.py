"""KIP-848 consumer groups (``group.protocol=consumer``) with librdkafka, one consumer per
process: members join one by one and the group rebalances incrementally (a member keeps
consuming the partitions it keeps), a killed member is fenced when its session runs out, a
leaving one at once, and offsets are committed at the members' epochs. A classic group of
kafka-python consumers runs beside it on the same cluster, as in Kafka 4.0."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, ConsumerGroupType, Producer
from confluent_kafka import TopicPartition as CTP
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)
from kafka import KafkaConsumer, TopicPartition
from kio.schema.consumer_group_describe.v1.request import ConsumerGroupDescribeRequest
from kio.schema.find_coordinator.v6.request import FindCoordinatorRequest

from kafkalite.broker.data_plane.handlers.consumer_groups import CLASSIC_MEMBER, CONSUMER_MEMBER
from kafkalite.cluster import Cluster
from tests.support.group_members import Member, fail_coordinator_over, group_events, settle
from tests.support.ports import free_base_port
from tests.support.raw import RawConnection
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow, pytest.mark.xdist_group("heavy")]

CONSUMER = "librdkafka-consumer-protocol"
SESSION_MS = 3000
"""The group's consumer.session.timeout.ms: a killed member is fenced this long after its
last heartbeat."""


def _group_settings(admin: AdminClient, group: str) -> None:
    """A short session and frequent heartbeats for this group (KIP-848 group settings,
    IncrementalAlterConfigs on the GROUP resource)."""
    change = ConfigResource(
        ConfigResource.Type.GROUP,
        group,
        incremental_configs=[
            ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
            for name, value in (
                ("consumer.session.timeout.ms", str(SESSION_MS)),
                ("consumer.heartbeat.interval.ms", "500"),
            )
        ],
    )
    admin.incremental_alter_configs([change])[change].result(10)


class Writer:
    """Writes to every partition of a topic, a record every few milliseconds, until stopped:
    the members always have something to consume and commit."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        self._producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(topic, partitions), name="writer", daemon=True
        )
        self.written = 0
        self._thread.start()

    def _run(self, topic: str, partitions: int) -> None:
        while not self._stop.is_set():
            self._producer.produce(topic, b"x", partition=self.written % partitions)
            self.written += 1
            self._producer.poll(0)
            self._stop.wait(0.005)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        assert self._producer.flush(20) == 0


def _committed(admin: AdminClient, group: str, topic: str, partitions: int) -> list[int]:
    request = [ConsumerGroupTopicPartitions(group, [CTP(topic, p) for p in range(partitions)])]
    answer = admin.list_consumer_group_offsets(request)[group].result(10)
    return [tp.offset for tp in sorted(answer.topic_partitions, key=lambda tp: tp.partition)]


def _ends(bootstrap: str, topic: str, partitions: int) -> list[int]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    ends = consumer.end_offsets([TopicPartition(topic, p) for p in range(partitions)])
    consumer.close()
    return [ends[TopicPartition(topic, p)] for p in range(partitions)]


def test_members_come_and_go_incrementally_and_commit(
    cluster: Cluster, topic: str, tmp_path: Path
) -> None:
    bootstrap = cluster.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 6, 1)])[topic].result(10)
    group = f"g-{topic}"
    _group_settings(admin, group)
    writer = Writer(bootstrap, topic, 6)
    try:
        a = Member(CONSUMER, bootstrap, topic, group, tmp_path)
        settle([a], 6)

        # two more join; a keeps consuming what it keeps all along (no stop-the-world)
        joined = [Member(CONSUMER, bootstrap, topic, group, tmp_path) for _ in range(2)]
        members = [a, *joined]
        least_held_by_a = 6
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            least_held_by_a = min(least_held_by_a, len(a.assigned))
            owned = [m.assigned for m in members]
            if sum(map(len, owned)) == 6 and all(len(o) == 2 for o in owned):
                break
            time.sleep(0.02)
        settle(members, 6)
        assert least_held_by_a == 2, "a gave up more than the partitions that moved"

        described = admin.describe_consumer_groups([group])[group].result(10)
        assert described.type == ConsumerGroupType.CONSUMER
        assert described.state.name == "STABLE" and len(described.members) == 3
        assert described.partition_assignor == "uniform"
        for m in described.members:  # each member holds its target: reconciled
            assert {(t.topic, t.partition) for t in m.assignment.topic_partitions} == {
                (t.topic, t.partition) for t in m.target_assignment.topic_partitions
            }
        # the coordinator's view (kafkalite status, the dashboard): every member at the
        # group's epoch, holding its target, nothing on the move
        (seen,) = [g for g in cluster.status()["groups"] if g["group"] == group]
        assert (seen["protocol"], seen["state"]) == ("consumer", "Stable")
        assert {m["member_epoch"] for m in seen["members"]} == {seen["epoch"]}
        assert sorted(p for m in seen["members"] for p in m["assigned"]) == [
            f"{topic}-{p}" for p in range(6)
        ]
        assert all(not m["revoking"] and not m["waiting"] for m in seen["members"])

        # kill -9: no goodbye; its partitions move when its session has run out
        c = joined[1]
        c.kill()
        killed = time.monotonic()
        settle([a, joined[0]], 6)
        assert time.monotonic() - killed >= SESSION_MS / 1000 / 2
        reasons = [
            e["reason"]
            for e in group_events(bootstrap)
            if e["type"] == "group_member_removed" and e["group"] == group
        ]
        assert reasons == ["session timeout"]

        joined[0].leave()  # a clean leave: at once
        settle([a], 6)
    finally:
        writer.stop()
    ends = _ends(bootstrap, topic, 6)
    wait_for(lambda: _committed(admin, group, topic, 6) == ends, 30, "a to commit everything")
    a.leave()
    epochs = [
        e["epoch"]
        for e in group_events(bootstrap)
        if e["type"] == "consumer_group_assignment_computed" and e["group"] == group
    ]
    # joined, joined, joined, fenced, left: each a new group epoch and target assignment
    assert epochs == sorted(epochs) and len(epochs) >= 5


def _group_view(cluster: Cluster, group: str) -> dict:
    (seen,) = [g for g in cluster.status()["groups"] if g["group"] == group]
    return seen


def _member_types(bootstrap: str, group: str) -> list[int]:
    """ConsumerGroupDescribe v1's member types, asked of the group's coordinator."""
    with RawConnection(bootstrap) as conn:
        found = conn.request(FindCoordinatorRequest(key_type=0, coordinator_keys=(group,)))
    (coordinator,) = found.coordinators
    with RawConnection(f"{coordinator.host}:{coordinator.port}") as conn:
        request = ConsumerGroupDescribeRequest(
            group_ids=(group,), include_authorized_operations=False
        )
        described = conn.request(request)
    return [int(m.member_type) for m in described.groups[0].members]


@pytest.mark.parametrize("classic_client", ["kafka-python", "librdkafka"])
def test_a_live_classic_group_upgrades_online_and_back(
    cluster: Cluster, topic: str, tmp_path: Path, classic_client: str
) -> None:
    """Kafka 4.0's online migration (``group.consumer.migration.policy=bidirectional``): a
    classic member (kafka-python, or librdkafka with the classic protocol) holds every
    partition; a librdkafka member of the consumer protocol joins the same group, which
    becomes a consumer group with both in it, sharing the partitions; when it leaves, the
    group is classic again and the classic member takes everything back. Offsets
    committed before, during and after are all kept."""
    bootstrap = cluster.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 4, 1)])[topic].result(10)
    group = f"mixed-{topic}"
    _group_settings(admin, group)
    writer = Writer(bootstrap, topic, 4)
    try:
        wait_for(lambda: min(_ends(bootstrap, topic, 4)) >= 5, 30, "5 records a partition")
        start = [ConsumerGroupTopicPartitions(group, [CTP(topic, p, 5) for p in range(4)])]
        admin.alter_consumer_group_offsets(start)[group].result(10)  # while it is empty
        classic = Member(classic_client, bootstrap, topic, group, tmp_path)
        settle([classic], 4)
        assert _group_view(cluster, group)["protocol"] == "classic"

        modern = Member(CONSUMER, bootstrap, topic, group, tmp_path)
        settle([classic, modern], 4)  # both hold partitions, none twice
        seen = _group_view(cluster, group)
        assert (seen["protocol"], seen["state"]) == ("consumer", "Stable")
        assert sorted(m["member_protocol"] for m in seen["members"]) == ["classic", "consumer"]
        assert sorted(_member_types(bootstrap, group)) == [CLASSIC_MEMBER, CONSUMER_MEMBER]
        modern_held = modern.assigned
        wait_for(
            lambda: all(_committed(admin, group, topic, 4)[p] > 5 for p in modern_held),
            30,
            "the consumer-protocol member to commit",
        )

        modern.leave()
        settle([classic], 4)  # the classic member gets every partition back
        assert _group_view(cluster, group)["protocol"] == "classic"
    finally:
        writer.stop()
    committed = _committed(admin, group, topic, 4)
    assert all(committed[p] > 5 for p in modern_held)
    assert all(offset >= 5 for offset in committed)
    changes = [
        e["protocol"]
        for e in group_events(bootstrap)
        if e["type"] == "group_protocol_changed" and e["group"] == group
    ]
    assert changes == ["consumer", "classic"]
    classic.leave()


def test_with_migration_disabled_a_live_classic_group_stays_classic(
    tmp_path: Path, topic: str
) -> None:
    """``group.consumer.migration.policy=disabled``: the consumer-protocol member's
    heartbeat gets GROUP_ID_NOT_FOUND, the broker logs why, and the classic member keeps
    every partition."""
    cluster = Cluster.up(
        tmp_path / "cluster",
        brokers=1,
        base_port=free_base_port(1),
        configs={"group.consumer.migration.policy": "disabled"},
    )
    try:
        bootstrap = cluster.bootstrap_servers
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(10)
        group = f"kept-{topic}"
        classic = Member("kafka-python", bootstrap, topic, group, tmp_path)
        settle([classic], 2)
        modern = Member(CONSUMER, bootstrap, topic, group, tmp_path)
        log = Path(cluster.spec.brokers[0].data_dir) / "broker.log"
        refused = f"group {group}: cannot upgrade the classic group to a consumer group"
        wait_for(lambda: refused in log.read_text(), 30, "the refusal in broker.log")
        assert "online upgrade is disabled" in log.read_text()
        assert _group_view(cluster, group)["protocol"] == "classic"
        assert classic.assigned == {0, 1} and modern.assigned == set()
        modern.leave()
        classic.leave()
    finally:
        cluster.down()


def _consume(consumer: Consumer, count: int) -> list[bytes]:
    got: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(got) < count and time.monotonic() < deadline:
        msg = consumer.poll(0.2)
        if msg is not None and not msg.error():
            got.append(msg.value())
    return got


def test_classic_and_consumer_groups_side_by_side(bootstrap: str, topic: str) -> None:
    """A kafka-python (classic) group and a KIP-848 group read one topic at once, each
    listed and described as what it is; when the classic group is empty, a consumer of the
    new protocol takes its group id over and carries on from its committed offsets (Kafka
    4.0's offline upgrade)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(10)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(20):
        producer.produce(topic, b"r%d" % i, partition=i % 2)
    producer.flush(20)
    classic, modern = f"classic-{topic}", f"modern-{topic}"
    old = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=classic,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    new = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": modern,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    new.subscribe([topic])
    read_old = 0
    deadline = time.monotonic() + 30
    while read_old < 20 and time.monotonic() < deadline:
        read_old += sum(len(rs) for rs in old.poll(timeout_ms=500).values())
    assert read_old == 20
    assert len(_consume(new, 20)) == 20
    old.commit()
    new.commit(asynchronous=False)

    listed = admin.list_consumer_groups().result(10).valid
    types = {g.group_id: g.type for g in listed if g.group_id in (classic, modern)}
    assert types == {classic: ConsumerGroupType.CLASSIC, modern: ConsumerGroupType.CONSUMER}
    described = admin.describe_consumer_groups([classic, modern])
    assert described[classic].result(10).type == ConsumerGroupType.CLASSIC
    assert len(described[modern].result(10).members) == 1
    assert _committed(admin, modern, topic, 2) == [10, 10]
    new.close()

    old.close()  # the classic group is empty now: its id may change protocols
    upgraded = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": classic,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
        }
    )
    upgraded.subscribe([topic])
    for i in range(4):
        producer.produce(topic, b"late%d" % i, partition=i % 2)
    producer.flush(20)
    # from the classic group's committed offsets: none of the 20 it had read comes again
    assert sorted(_consume(upgraded, 4)) == [b"late0", b"late1", b"late2", b"late3"]
    upgraded.close()
    kinds = {g.group_id: g.type for g in admin.list_consumer_groups().result(10).valid}
    assert kinds[classic] == ConsumerGroupType.CONSUMER


def test_a_static_member_restarted_with_the_classic_protocol_downgrades_the_group(
    cluster: Cluster, topic: str
) -> None:
    """Kafka 4.0 (``classicGroupJoinToConsumerGroup``): a librdkafka static member of the
    consumer protocol (``group.instance.id``) reads and commits, then closes - a static
    member's close only says "leaving for now" (member epoch -2), keeping its place and its
    partitions; a kafka-python member with the same instance id joins. The group is classic
    at once - no session timeout waited for, no rebalance - and the newcomer reads on from
    the committed offsets."""
    bootstrap = cluster.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(10)
    producer = Producer({"bootstrap.servers": bootstrap})

    def write(prefix: bytes) -> None:
        for i in range(20):
            producer.produce(topic, b"%s%d" % (prefix, i), partition=i % 2)
        producer.flush(20)

    write(b"before")
    group = f"restarted-{topic}"
    modern = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "group.instance.id": "app-1",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    modern.subscribe([topic])
    assert len(_consume(modern, 20)) == 20
    modern.commit(asynchronous=False)
    assert _committed(admin, group, topic, 2) == [10, 10]
    modern.close()
    (away,) = _group_view(cluster, group)["members"]
    assert (away["instance_id"], away["member_epoch"]) == ("app-1", -2)  # left for now
    assert sorted(away["assigned"]) == [f"{topic}-0", f"{topic}-1"]

    write(b"after")
    classic = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        group_instance_id="app-1",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    first_offsets: dict[int, int] = {}
    deadline = time.monotonic() + 30
    while len(first_offsets) < 2 and time.monotonic() < deadline:
        for tp, records in classic.poll(timeout_ms=500).items():
            first_offsets.setdefault(tp.partition, records[0].offset)
    assert first_offsets == {0: 10, 1: 10}  # from the committed offsets, not "earliest"
    seen = _group_view(cluster, group)
    assert (seen["protocol"], seen["state"]) == ("classic", "Stable")
    assert [m["instance_id"] for m in seen["members"]] == ["app-1"]
    events = [e for e in group_events(bootstrap) if e.get("group") == group]
    changes = [e["protocol"] for e in events if e["type"] == "group_protocol_changed"]
    assert changes == ["classic"]
    assert [e for e in events if e["type"] == "group_member_removed"] == []  # none timed out
    classic.close()


def test_a_consumer_group_outlives_its_coordinator(
    make_cluster3: Callable[..., Cluster], topic: str, tmp_path: Path
) -> None:
    """The coordinator's broker is killed: the next leader of the group's partition of
    __consumer_offsets replays the group's records, its members carry on at the epochs
    they have (no rebalance), and a new member joins there incrementally."""
    cluster = make_cluster3()
    bootstrap = cluster.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 4, 3)])[topic].result(10)
    group = f"g-{topic}"
    _group_settings(admin, group)
    a, b = (Member(CONSUMER, bootstrap, topic, group, tmp_path) for _ in range(2))
    settle([a, b], 4)
    held = (a.assigned, b.assigned)
    before, after = fail_coordinator_over(cluster, group)
    assert after["epoch"] == before["epoch"]  # rebuilt from the log: the same group
    assert {m["member_id"]: m["member_epoch"] for m in after["members"]} == {
        m["member_id"]: m["member_epoch"] for m in before["members"]
    }
    assert (a.assigned, b.assigned) == held
    c = Member(CONSUMER, bootstrap, topic, group, tmp_path)
    settle([a, b, c], 4)
    for member in (a, b, c):
        member.leave()
