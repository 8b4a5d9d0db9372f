"""Static membership (KIP-345), the initial rebalance delay, DeleteGroups and OffsetDelete,
driven on the coordinator with a clock the test moves (no broker, no sockets)."""

from __future__ import annotations

import asyncio
import io
import struct
from types import SimpleNamespace

import pytest
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)
from kio.schema.consumer_protocol_subscription.v3 import data as v3
from kio.serial import entity_writer

from kafkalite.coordinator.group.consumer_protocol import subscribed_topics
from kafkalite.coordinator.group.coordinator import GroupCoordinator
from kafkalite.coordinator.group.deletions_while_unloaded import DeletionsWhileUnloaded
from kafkalite.coordinator.group.group import GroupState
from kafkalite.coordinator.group.join_group import JoinRequest, JoinResult
from kafkalite.coordinator.group.offsets_log import CommittedOffset, decode
from kafkalite.protocol.errors import ErrorCode, KafkaError
from tests.unit.coordinator.fakes import (
    Clock,
    FakeOffsetsTopic,
    FakeTopics,
    consumer_config,
    subscription,
)

pytestmark = [pytest.mark.unit, pytest.mark.asyncio]


def make(
    clock: Clock, initial_delay_ms: int = 0, topic: FakeOffsetsTopic | None = None
) -> tuple[GroupCoordinator, FakeOffsetsTopic]:
    """A coordinator of ``topic``'s partition (a new one by default); on a topic another
    coordinator wrote, it is that one's successor after a failover and loads the log."""
    topic = FakeOffsetsTopic() if topic is None else topic
    events: list[tuple[object, dict[str, object]]] = []
    coordinator = GroupCoordinator(
        topic,
        clock,
        lambda kind, **fields: events.append((kind, fields)),
        lambda: 0,
        lambda: 60_000,
        lambda: initial_delay_ms,
        topics=FakeTopics(),
        consumer_config=consumer_config(),
    )
    return coordinator, topic


def join(
    c: GroupCoordinator,
    member_id: str = "",
    instance: str | None = None,
    topics: tuple = ("t",),
    metadata: bytes | None = None,
    session_timeout_ms: int = 10_000,
    rebalance_timeout_ms: int = 10_000,
) -> asyncio.Task[JoinResult]:
    request = JoinRequest(
        group_id="g",
        member_id=member_id,
        group_instance_id=instance,
        client_id="c",
        client_host="h",
        session_timeout_ms=session_timeout_ms,
        rebalance_timeout_ms=rebalance_timeout_ms,
        protocol_type="consumer",
        protocols=[("range", subscription(*topics) if metadata is None else metadata)],
        require_known_member_id=True,
    )
    return asyncio.ensure_future(c.join(request))


async def stable_group_of_two_static_members(c: GroupCoordinator) -> dict[str, JoinResult]:
    """a forms generation 1 alone; b joins and a rejoins: generation 2, both assigned."""
    a = await join(c, instance="a")
    await c.sync("g", 1, a.member_id, {a.member_id: b"for-a"})
    b_joining = join(c, instance="b")
    await asyncio.sleep(0)
    a, b = await asyncio.gather(join(c, a.member_id, "a"), b_joining)
    results = {"a": a, "b": b}
    assert {r.generation_id for r in results.values()} == {2}
    leader = next(r for r in results.values() if r.member_id == r.leader)
    follower = next(r for r in results.values() if r is not leader)
    assignments = {r.member_id: f"for-{k}".encode() for k, r in results.items()}
    synced = asyncio.ensure_future(c.sync("g", 2, follower.member_id, {}))
    await asyncio.sleep(0)
    await c.sync("g", 2, leader.member_id, assignments)
    await synced
    assert c.groups["g"].state == GroupState.STABLE
    return results


async def test_a_static_member_that_restarts_gets_its_assignment_without_a_rebalance() -> None:
    c, _ = make(Clock())
    before = await stable_group_of_two_static_members(c)
    rejoined = await join(c, instance="a")  # a restarted: no member id, same instance id
    assert rejoined.error == ErrorCode.none
    assert rejoined.member_id != before["a"].member_id
    assert rejoined.generation_id == 2  # nobody else rebalanced
    assert rejoined.leader == before["a"].leader  # the old leader id: it will not reassign
    assert rejoined.members == []
    assert await c.sync("g", 2, rejoined.member_id, {}) == b"for-a"
    c.heartbeat("g", 2, before["b"].member_id, "b")  # b is undisturbed
    assert c.groups["g"].state == GroupState.STABLE
    with pytest.raises(KafkaError) as fenced:  # a's old incarnation is fenced
        c.heartbeat("g", 2, before["a"].member_id, "a")
    assert fenced.value.code == ErrorCode.fenced_instance_id


async def test_an_emptied_groups_generation_outlives_its_coordinator() -> None:
    """The group's record is written when it becomes Empty, its generation bumped (Kafka's
    ``completeClassicGroupJoin``): the next coordinator never hands that generation out
    again. (It loaded generation 2, the last Stable one, and formed generation 3 twice.)"""
    clock = Clock()
    c, topic = make(clock)
    results = await stable_group_of_two_static_members(c)  # generation 2
    assert c.leave("g", [(r.member_id, k) for k, r in results.items()]) == [ErrorCode.none] * 2
    assert (c.groups["g"].state, c.groups["g"].generation_id) == (GroupState.EMPTY, 3)
    await asyncio.sleep(0)  # the record is written in the background
    successor, _ = make(clock, topic=topic)
    successor.check_coordinator("g")  # it loads the log
    assert (successor.groups["g"].state, successor.groups["g"].generation_id) == (
        GroupState.EMPTY,
        3,
    )
    assert (await join(successor, instance="a")).generation_id == 4


async def test_static_members_keep_their_places_under_the_next_coordinator() -> None:
    """The group's record keeps its members as Kafka's ``GroupMetadataValue`` does, each
    with its ``group.instance.id``, metadata and assignment: after a failover the members
    carry on in their generation, and a static member that restarts takes its place
    without a rebalance, its old member id fenced. (The next coordinator knew no member:
    everyone joined again, and the static member as a new one.)"""
    clock = Clock()
    c, topic = make(clock)
    before = await stable_group_of_two_static_members(c)
    clock.now = 5_000
    successor, _ = make(clock, topic=topic)
    successor.check_coordinator("g")  # it loads the log
    group = successor.groups["g"]
    assert (group.state, group.generation_id) == (GroupState.STABLE, 2)
    assert group.static_member("a") == before["a"].member_id
    assert group.members[before["a"].member_id].last_heartbeat_ms == 5_000  # loaded now
    successor.heartbeat("g", 2, before["b"].member_id, "b")  # b carries on
    rejoined = await join(successor, instance="a")  # a restarted meanwhile
    assert (rejoined.error, rejoined.generation_id) == (ErrorCode.none, 2)
    assert await successor.sync("g", 2, rejoined.member_id, {}) == b"for-a"
    assert successor.groups["g"].state == GroupState.STABLE
    with pytest.raises(KafkaError) as fenced:
        successor.heartbeat("g", 2, before["a"].member_id, "a")
    assert fenced.value.code == ErrorCode.fenced_instance_id


class _Partitions:
    """What kafka-python's assignors ask of its cluster metadata: topic t has 4 partitions."""

    @staticmethod
    def partitions_for_topic(topic: str) -> set[int]:
        return {0, 1, 2, 3}


def kafka_python_range_assignment(leader: JoinResult) -> dict[str, bytes]:
    """What a kafka-python 3.0.12 leader assigns from its JoinGroup answer: its own range
    assignor over the members the answer lists, each subscription decoded as it decodes
    it (``ConsumerCoordinator._perform_assignment``)."""
    members = [
        SimpleNamespace(
            member_id=member_id,
            group_instance_id=instance,
            metadata=ConsumerProtocolSubscription.decode(metadata),
        )
        for member_id, instance, metadata in leader.members
    ]
    assignment = RangePartitionAssignor.assign(_Partitions(), members)
    return {member_id: a.encode() for member_id, a in assignment.items()}


def partitions(assignment: bytes) -> list[int]:
    """The partitions of t a kafka-python assignment gives."""
    topics = ConsumerProtocolAssignment.decode(assignment).assigned_partitions
    return sorted(p for topic in topics for p in topic.partitions)


async def test_a_static_member_restarted_during_completing_rebalance_is_assigned() -> None:
    """CI's failure (2026-11-29, the restarted static member's integration test): static b,
    then static a, form a group; a dies; dynamic c joins, and the rebalance completes after
    a's rebalance timeout with a kept (generation 3, in the order b, a, c). The restarted a
    joins during CompletingRebalance: it takes its old place under a new member id (moved
    last: b, c, a) and everyone rebalances to generation 4. The leader b's answer lists all
    three with their subscriptions, but kafka-python's range assignor splits static from
    dynamic members with ``itertools.groupby`` over the list as given, which groups only
    neighbours: b, cut off from a by c, was left out, and b had no partition while a and c
    shared the four, generation after generation. Static members are listed first now."""
    clock = Clock()
    c, _ = make(clock)
    times = {"session_timeout_ms": 20_000, "rebalance_timeout_ms": 4_000}
    b = await join(c, instance="b", **times)
    await c.sync("g", 1, b.member_id, {b.member_id: b""})
    a_joining = join(c, instance="a", **times)
    await asyncio.sleep(0)
    b, a = await asyncio.gather(join(c, b.member_id, "b", **times), a_joining)
    synced = asyncio.ensure_future(c.sync("g", 2, a.member_id, {}))
    await asyncio.sleep(0)
    await c.sync("g", 2, b.member_id, kafka_python_range_assignment(b))
    await synced
    # a is killed; c joins (the member id round trip first) and b rejoins; a never does
    asked = await join(c, **times)
    c_joining = join(c, asked.member_id, **times)
    await asyncio.sleep(0)
    b_joining = join(c, b.member_id, "b", **times)
    await asyncio.sleep(0)
    clock.now = 4_001
    c.tick()  # the rebalance timeout: a, static, keeps its place
    b, dynamic = await asyncio.gather(b_joining, c_joining)
    assert (b.generation_id, len(b.members)) == (3, 3)
    assert c.groups["g"].state == GroupState.COMPLETING_REBALANCE
    a_joining = join(c, instance="a", **times)  # a restarted: no member id
    await asyncio.sleep(0)
    b_joining = join(c, b.member_id, "b", **times)
    c_joining = join(c, dynamic.member_id, **times)
    a, b, dynamic = await asyncio.gather(a_joining, b_joining, c_joining)
    assert {r.generation_id for r in (a, b, dynamic)} == {4}
    assert b.leader == b.member_id
    assert {(m, i) for m, i, _ in b.members} == {
        (a.member_id, "a"),
        (b.member_id, "b"),
        (dynamic.member_id, None),
    }
    assert all(subscribed_topics(metadata) == {"t"} for _, _, metadata in b.members)
    assignments = kafka_python_range_assignment(b)
    followers = [asyncio.ensure_future(c.sync("g", 4, r.member_id, {})) for r in (a, dynamic)]
    await asyncio.sleep(0)
    assert await c.sync("g", 4, b.member_id, assignments) == assignments[b.member_id]
    assert await asyncio.gather(*followers) == [
        assignments[a.member_id],
        assignments[dynamic.member_id],
    ]
    owned = {
        k: partitions(assignments[r.member_id]) for k, r in {"a": a, "b": b, "c": dynamic}.items()
    }
    assert owned == {"a": [0, 1], "b": [2], "c": [3]}  # was a [0, 1], b [], c [2, 3]


async def test_a_leader_restarted_during_completing_rebalance_leads_under_its_new_id() -> None:
    """Kafka's ``updateStaticMemberThenRebalanceOrCompleteJoin`` in CompletingRebalance: the
    restarted static leader takes its place (``replaceStaticMember``: the leadership moves to
    its new member id, its old one is fenced) and the group rebalances, since the old id may
    already be in the assignment the leader is computing; the next generation's leader is
    the new id, answered with every member."""
    c, _ = make(Clock())
    before = await stable_group_of_two_static_members(c)
    leader = next(k for k, r in before.items() if r.member_id == r.leader)
    follower = next(k for k in before if k != leader)
    rejoining = [join(c, before[k].member_id, k) for k in (leader, follower)]
    assert {r.generation_id for r in await asyncio.gather(*rejoining)} == {3}
    assert c.groups["g"].state == GroupState.COMPLETING_REBALANCE
    restarted = join(c, instance=leader)  # no member id: a new incarnation
    await asyncio.sleep(0)
    with pytest.raises(KafkaError) as fenced:
        await c.sync("g", 3, before[leader].member_id, {}, leader)  # the old incarnation
    assert fenced.value.code == ErrorCode.fenced_instance_id
    new, other = await asyncio.gather(restarted, join(c, before[follower].member_id, follower))
    assert (new.generation_id, new.leader, other.leader) == (4, new.member_id, new.member_id)
    assert sorted((i, m) for m, i, _ in new.members) == sorted(
        [(leader, new.member_id), (follower, before[follower].member_id)]
    )


def owning(*partitions: int) -> bytes:
    """JoinGroup metadata that says which partitions of ``t`` the member owns (v3, as a
    cooperative member writes it)."""
    out = io.BytesIO()
    out.write(struct.pack(">h", 3))
    owned = (v3.TopicPartition(topic="t", partitions=partitions),) if partitions else ()
    entity_writer(v3.ConsumerProtocolSubscription)(
        out, v3.ConsumerProtocolSubscription(topics=("t",), owned_partitions=owned)
    )
    return out.getvalue()


async def test_a_static_member_restarting_with_other_metadata_keeps_its_place() -> None:
    """Its metadata differs from its older incarnation's (it owns nothing yet), not the
    group's protocol: Kafka does not rebalance a stable group for that."""
    c, _ = make(Clock())
    a = await join(c, instance="a", metadata=owning())
    await c.sync("g", 1, a.member_id, {a.member_id: b"for-a"})
    a = await join(c, a.member_id, "a", metadata=owning(0))  # the leader rejoins: owns 0
    await c.sync("g", 2, a.member_id, {a.member_id: b"for-a"})
    rejoined = await join(c, instance="a", metadata=owning())  # restarted: owns nothing
    assert (rejoined.error, rejoined.generation_id) == (ErrorCode.none, 2)
    assert c.groups["g"].state == GroupState.STABLE
    assert await c.sync("g", 2, rejoined.member_id, {}) == b"for-a"


async def test_a_static_member_may_join_without_the_member_id_round_trip() -> None:
    c, _ = make(Clock())
    result = await join(c, instance="solo")
    assert result.error == ErrorCode.none  # no MEMBER_ID_REQUIRED for a static member
    assert result.leader == result.member_id


async def test_the_first_rebalance_waits_the_initial_delay_extended_by_each_joiner() -> None:
    clock = Clock()
    c, _ = make(clock, initial_delay_ms=3000)
    first_id = (await join(c)).member_id  # MEMBER_ID_REQUIRED round trip
    first = join(c, first_id)
    await asyncio.sleep(0)
    clock.now = 1000
    second_id = (await join(c)).member_id
    second = join(c, second_id)
    await asyncio.sleep(0)
    clock.now = 3500  # past the first delay, but the second joiner extended it to 4000
    c.tick()
    await asyncio.sleep(0)
    assert not first.done()
    clock.now = 4000
    c.tick()
    results = await asyncio.gather(first, second)
    assert {r.generation_id for r in results} == {1}  # one rebalance with both members
    assert len(next(r for r in results if r.members).members) == 2


async def test_without_an_initial_delay_the_first_member_is_assigned_at_once() -> None:
    c, _ = make(Clock())
    member_id = (await join(c)).member_id
    assert (await join(c, member_id)).generation_id == 1


async def test_delete_groups_refuses_a_group_with_members_and_forgets_an_empty_one() -> None:
    c, topic = make(Clock())
    results = await stable_group_of_two_static_members(c)
    a = results["a"]
    await c.commit("g", 2, a.member_id, {("t", 0): CommittedOffset(5, 0, None, 0)}, "a")
    assert await c.delete_group("g") == ErrorCode.non_empty_group
    c.leave("g", [("", "a"), (results["b"].member_id, "b")])  # by instance id alone, too
    assert await c.delete_group("g") == ErrorCode.none
    assert c.fetch_offsets("g") == {}
    assert await c.delete_group("g") == ErrorCode.group_id_not_found
    tombstones = [decode(r) for r in topic.records[-2:]]
    assert [(k["type"], v) for k, v in tombstones if k] == [("offset", None), ("group", None)]
    topic.epoch = 7  # a new coordinator replays the log: the group stays deleted
    assert c.fetch_offsets("g") == {}
    assert "g" not in c.groups


async def test_offset_delete_keeps_the_offsets_of_subscribed_topics() -> None:
    c, _ = make(Clock())
    await stable_group_of_two_static_members(c)  # both subscribe to "t"
    offsets = {tp: CommittedOffset(5, 0, None, 0) for tp in [("t", 0), ("old", 0), ("old", 1)]}
    await c.manager.store_offsets("g", offsets)
    results = await c.delete_offsets("g", [("t", 0), ("old", 0), ("old", 1)])
    assert results[("t", 0)] == ErrorCode.group_subscribed_to_topic
    assert results[("old", 0)] == results[("old", 1)] == ErrorCode.none
    assert set(c.fetch_offsets("g")) == {("t", 0)}


async def test_offset_delete_of_an_unknown_group() -> None:
    c, _ = make(Clock())
    with pytest.raises(KafkaError) as unknown:
        await c.delete_offsets("nobody", [("t", 0)])
    assert unknown.value.code == ErrorCode.group_id_not_found


async def test_subscribed_topics_reads_the_first_and_the_latest_subscription_version() -> None:
    assert subscribed_topics(subscription("a", "b")) == {"a", "b"}
    out = io.BytesIO()
    out.write(struct.pack(">h", 3))
    entity_writer(v3.ConsumerProtocolSubscription)(
        out,
        v3.ConsumerProtocolSubscription(
            topics=("x",),
            owned_partitions=(v3.TopicPartition(topic="x", partitions=(0,)),),
            rack_id="r1",
        ),
    )
    assert subscribed_topics(out.getvalue()) == {"x"}
    assert subscribed_topics(b"\x00") == set()


async def test_a_deleted_topics_offsets_are_forgotten_and_tombstoned() -> None:
    c, topic = make(Clock())
    offsets = {tp: CommittedOffset(5, 0, None, 0) for tp in [("gone", 0), ("gone", 1), ("kept", 0)]}
    await c.manager.store_offsets("g", offsets)
    c.on_topic_deleted("gone")
    assert set(c.fetch_offsets("g")) == {("kept", 0)}
    await asyncio.gather(*c._cleanups)
    written = [decode(r) for r in topic.records[-2:]]
    assert sorted((k["topic"], k["partition"], v) for k, v in written if k) == [
        ("gone", 0, None),
        ("gone", 1, None),
    ]
    topic.epoch = 9  # reloaded by a new coordinator: still gone
    assert set(c.fetch_offsets("g")) == {("kept", 0)}


async def test_a_topic_deleted_while_its_offsets_partition_loads_stays_deleted() -> None:
    """A new leader of the offsets partition has not loaded it when the topic is deleted
    (its load is lazy, or under way): the load drops the offsets and writes their
    tombstones, so that a topic created again under the name starts from nothing."""
    first, topic = make(Clock())
    offsets = {tp: CommittedOffset(30, 0, None, 0) for tp in [("payments", 0), ("kept", 0)]}
    await first.manager.store_offsets("g", offsets)
    successor, _ = make(Clock())
    successor.manager.offsets = topic
    topic.epoch = 1  # the successor leads, and has loaded nothing yet
    successor.on_topic_deleted("payments")
    assert set(successor.fetch_offsets("g")) == {("kept", 0)}  # the load dropped them
    await asyncio.gather(*successor._cleanups)
    [(key, value)] = [d for d in (decode(r) for r in topic.records[-1:]) if d]
    assert (key["topic"], key["partition"], value) == ("payments", 0, None)
    topic.epoch = 2  # and the next leader's load finds the tombstone
    assert set(successor.fetch_offsets("g")) == {("kept", 0)}


def test_a_deletion_counts_only_for_the_leadership_it_happened_in() -> None:
    pending = DeletionsWhileUnloaded()
    pending.remember(0, 1, "payments")
    pending.remember(0, 1, "clicks")
    assert pending.take(0, 1) == {"payments", "clicks"}
    assert pending.take(0, 1) == set()  # taken once
    pending.remember(0, 1, "payments")
    assert pending.take(0, 2) == set()  # loaded in a later leadership: others may have written
    pending.remember(0, 1, "old")
    pending.remember(0, 3, "new")  # an unloaded leadership's deletions give way to the next's
    assert pending.take(0, 3) == {"new"}


async def test_a_coordinator_that_lost_its_partition_forgets_its_groups() -> None:
    """Kafka's ``onResignation``: once another broker leads the group's offsets partition,
    this one neither expires the group's members nor rebalances it, and a join parked
    here is told NOT_COORDINATOR so the member finds the new coordinator."""
    clock = Clock()
    c, topic = make(clock)
    await stable_group_of_two_static_members(c)
    joining = join(c, instance="c")  # a third member parks its join: a rebalance begins
    await asyncio.sleep(0)
    assert not joining.done()
    events: list[object] = []
    c.emit = lambda kind, **fields: events.append(kind)
    topic.epoch = None  # the partition's leadership moves to another broker
    clock.now = 60_000  # every session here has run out
    c.tick()
    assert (await joining).error == ErrorCode.not_coordinator
    assert "g" not in c.groups
    assert events == []  # no member expired, no rebalance, on a broker that is not in charge


async def test_the_session_check_runs_often_only_while_a_group_has_members() -> None:
    """An idle broker's coordinator checks once a second (its wake-ups were most of an
    idle broker's CPU); a join wakes it, and from then on it checks every 100 ms."""
    c, _ = make(Clock())
    assert not c.watching()
    asked = await join(c)  # MEMBER_ID_REQUIRED: nobody has joined yet
    assert asked.error == ErrorCode.member_id_required
    assert not c.watching()
    a = await join(c, asked.member_id)
    assert c.watching()
    await c.sync("g", 1, a.member_id, {a.member_id: b"x"})
    assert c.watching()  # a stable group: the member's session runs
    assert c.leave("g", [(a.member_id, None)]) == [ErrorCode.none]
    assert c.groups["g"].state == GroupState.EMPTY
    assert not c.watching()


async def test_offset_commit_to_a_missing_group_is_refused_by_version() -> None:
    """A member's commit (generation >= 0) to a group that does not exist: OffsetCommit
    v9+ says GROUP_ID_NOT_FOUND, older versions ILLEGAL_GENERATION (Kafka's
    ``validateOffsetCommit``); without a generation it creates a simple group."""
    c, _ = make(Clock())
    offsets = {("t", 0): CommittedOffset(5, -1, "", 0)}
    for version, error in ((9, ErrorCode.group_id_not_found), (8, ErrorCode.illegal_generation)):
        with pytest.raises(KafkaError) as refused:
            await c.commit("nobody", 3, "m", offsets, api_version=version)
        assert refused.value.code == error
    assert "nobody" not in c.groups
    await c.commit("simple", -1, "", offsets)
    await c.commit("simple", -1, "any-member-id", offsets)  # an empty group takes it too
    assert c.fetch_offsets("simple")[("t", 0)].offset == 5


async def test_a_live_group_takes_no_anonymous_commit() -> None:
    c, _ = make(Clock())
    a = await join(c, instance="a")
    await c.sync("g", 1, a.member_id, {a.member_id: b"x"})
    offsets = {("t", 0): CommittedOffset(1, -1, "", 0)}
    with pytest.raises(KafkaError) as refused:
        await c.commit("g", -1, "", offsets)
    assert refused.value.code == ErrorCode.unknown_member_id
    await c.commit("g", 1, a.member_id, offsets)
    assert c.fetch_offsets("g")[("t", 0)].offset == 1
