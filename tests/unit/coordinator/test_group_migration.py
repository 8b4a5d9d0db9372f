"""KIP-848's online migration, as Kafka 4.0 does it: a classic group with members becomes
a consumer group when a member of the consumer protocol joins, its classic members keep
their partitions and go on through JoinGroup, SyncGroup and Heartbeat, and it becomes
classic again when the last consumer-protocol member leaves, or when a classic static
member takes its place; committed offsets are kept throughout. The pure conversions
first, then the coordinator with a log the test holds."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from kio.schema.consumer_protocol_assignment.v0 import data as assignment_v0
from kio.serial import entity_reader

from kafkalite.coordinator.group.assignors import ASSIGNORS
from kafkalite.coordinator.group.classic_members import join, must_rejoin
from kafkalite.coordinator.group.consumer_group import ConsumerGroup, ConsumerGroupState
from kafkalite.coordinator.group.consumer_group_heartbeat import HeartbeatRequest
from kafkalite.coordinator.group.consumer_group_records import replay
from kafkalite.coordinator.group.consumer_member import (
    ClassicMemberMetadata,
    ConsumerGroupMember,
    MemberState,
)
from kafkalite.coordinator.group.consumer_protocol import write_assignment
from kafkalite.coordinator.group.coordinator import GroupCoordinator
from kafkalite.coordinator.group.group import Group, GroupState, Member
from kafkalite.coordinator.group.group_migration import (
    MigrationPolicy,
    all_members_use_classic_protocol_except,
    downgrade,
    upgrade,
    upgrade_refusal,
)
from kafkalite.coordinator.group.join_group import JoinRequest, JoinResult
from kafkalite.coordinator.group.offsets_log import CommittedOffset
from kafkalite.protocol.errors import ErrorCode, KafkaError
from tests.unit.coordinator.fakes import (
    Clock,
    FakeOffsetsTopic,
    FakeTopics,
    consumer_config,
    consumer_coordinator,
    subscription,
)

pytestmark = [pytest.mark.unit]


def partitions_of(assignment: bytes) -> dict[str, set[int]]:
    """A SyncGroup assignment, read by kio (not by the code under test)."""
    value, _ = entity_reader(assignment_v0.ConsumerProtocolAssignment)(assignment, 2)
    return {str(tp.topic): {int(p) for p in tp.partitions} for tp in value.assigned_partitions}


def classic_group(generation: int = 3) -> Group:
    """A stable classic group of two kafka-python-like members sharing topic A."""
    group = Group("g", GroupState.STABLE, generation, "consumer", "range")
    for name, held in (("k1", [0, 1]), ("k2", [2, 3])):
        member = Member(name, "kp", "h", 6000, 9000, [("range", subscription("A"))])
        member.assignment = write_assignment(0, {"A": held})
        group.add_member(member, "consumer")
    return group


def test_a_classic_group_becomes_a_consumer_group_keeping_each_members_partitions() -> None:
    upgraded, records = upgrade(classic_group(), FakeTopics(A=4))
    assert records[0] == ({"type": "group", "group": "g"}, None)
    groups: dict[str, ConsumerGroup] = {}
    for key, value in records[1:]:
        replay(groups, key, value)
    group = groups["g"]
    assert group == upgraded
    assert (group.group_epoch, group.assignment_epoch) == (3, 3)
    assert group.state == ConsumerGroupState.STABLE
    k1, k2 = group.members["k1"], group.members["k2"]
    assert (k1.member_epoch, k1.state, k1.subscribed_topic_names) == (3, MemberState.STABLE, ("A",))
    assert k1.assigned_partitions == {"id-A": frozenset({0, 1})}
    assert group.target_assignment["k2"] == {"id-A": frozenset({2, 3})}
    assert k2.classic == ClassicMemberMetadata(6000, (("range", subscription("A")),))
    assert group.partition_epoch("id-A", 3) == 3


def test_an_upgrade_needs_the_policy_and_the_consumer_embedded_protocol() -> None:
    group = classic_group()
    assert upgrade_refusal(group, MigrationPolicy.BIDIRECTIONAL, 10) is None
    assert upgrade_refusal(group, MigrationPolicy.UPGRADE, 10) is None
    assert "disabled" in (upgrade_refusal(group, MigrationPolicy.DISABLED, 10) or "")
    assert upgrade_refusal(group, MigrationPolicy.DOWNGRADE, 10) is not None
    assert upgrade_refusal(group, MigrationPolicy.BIDIRECTIONAL, 1) is not None
    group.protocol_type = "connect"
    assert upgrade_refusal(group, MigrationPolicy.BIDIRECTIONAL, 10) is not None


def mixed_group() -> ConsumerGroup:
    """One consumer-protocol member (c) and one classic member (k) at epoch 5."""
    group, _ = upgrade(classic_group(5), FakeTopics(A=4))
    group.remove_member("k2")
    group.target_assignment.pop("k2")
    group.update_member(ConsumerGroupMember("c", 5, 4, assigned_partitions={"id-A": {2, 3}}))
    group.target_assignment["c"] = {"id-A": frozenset({2, 3})}
    return group


def test_when_the_last_consumer_member_leaves_the_classic_members_form_a_classic_group() -> None:
    group = mixed_group()
    assert all_members_use_classic_protocol_except(group, "c")
    assert not all_members_use_classic_protocol_except(group, "k1")  # k1 is classic itself
    assert not all_members_use_classic_protocol_except(group, "gone")
    classic, records = downgrade(group, "c", FakeTopics(A=4), now_ms=77)
    assert (classic.state, classic.generation_id) == (GroupState.STABLE, 5)
    assert (classic.protocol_type, classic.protocol_name) == ("consumer", "range")
    assert list(classic.members) == ["k1"] and classic.leader_id == "k1"
    k1 = classic.members["k1"]
    assert (k1.session_timeout_ms, k1.rebalance_timeout_ms, k1.last_heartbeat_ms) == (
        6000,
        9000,
        77,
    )
    assert partitions_of(k1.assignment) == {"A": {0, 1}}
    assert records[-1][0] == {"type": "group", "group": "g"}
    groups = {"g": group}
    for key, value in records[:-1]:
        replay(groups, key, value)
    assert groups == {}  # every record of the consumer group is deleted


def test_another_consumer_protocol_member_keeps_the_group_a_consumer_group() -> None:
    group = mixed_group()
    group.update_member(ConsumerGroupMember("c2", 5, 4))
    assert not all_members_use_classic_protocol_except(group, "c")


def static_join(*topics: str, member_id: str = "") -> JoinRequest:
    """kafka-python's JoinGroup as static member ``i`` (v5+: no member id needed first)."""
    return JoinRequest(
        "g",
        member_id,
        "i",
        "kp",
        "h",
        6000,
        9000,
        "consumer",
        [("range", subscription(*topics))],
        True,
    )


def test_a_classic_static_member_replacing_the_last_consumer_member_forms_a_classic_group() -> None:
    """Kafka's ``classicGroupJoinToConsumerGroup`` with ``fromConsumerGroup``'s joining
    member: the newcomer (k9, instance i) takes c's place, and the classic group holds k1
    and k9 with the partitions c and k1 were to have, at the group epoch, stable."""
    group = mixed_group()
    group.update_member(replace(group.members["c"], instance_id="i", subscribed_topic_names=("A",)))
    topics = FakeTopics(A=4)
    joined = join(group, "k9", static_join("A"), topics, ASSIGNORS, 100)  # the JoinGroup's step
    assert joined.member is not None and joined.member_epoch == 5
    classic, records = downgrade(group, "c", topics, now_ms=77, joining=joined.member)
    assert (classic.state, classic.generation_id, classic.leader_id) == (GroupState.STABLE, 5, "k1")
    assert sorted(classic.members) == ["k1", "k9"] and classic.static_members == {"i": "k9"}
    k9 = classic.members["k9"]  # its session, from its JoinGroup, starts now
    assert (k9.session_timeout_ms, k9.last_heartbeat_ms) == (6000, 77)
    assert partitions_of(k9.assignment) == {"A": {2, 3}}
    assert partitions_of(classic.members["k1"].assignment) == {"A": {0, 1}}
    removed = {key.get("member") for key, value in records if value is None} - {None}
    assert removed == {"k1", "k9"}  # c's records went with the JoinGroup's replacement
    groups = {"g": group}
    for key, value in [*joined.records, *records[:-1]]:
        replay(groups, key, value)
    assert groups == {}


def test_a_classic_member_rejoins_when_the_group_moves_on_or_its_partitions_are_free() -> None:
    group = mixed_group()
    k1 = group.members["k1"]
    assert not must_rejoin(group, k1)
    group.group_epoch = 6
    assert must_rejoin(group, k1)
    group.group_epoch = 5
    waiting = ConsumerGroupMember("k1", 5, 5, MemberState.UNRELEASED_PARTITIONS, classic=k1.classic)
    group.target_assignment["k1"] = {"id-A": frozenset({0, 1, 2})}
    group.update_member(waiting)
    assert not must_rejoin(group, waiting)  # partition 2 is still c's
    group.remove_member("c")
    assert must_rejoin(group, waiting)


# ---- the coordinator -------------------------------------------------------------------


def make(
    topic: FakeOffsetsTopic, clock: Clock, policy: MigrationPolicy = MigrationPolicy.BIDIRECTIONAL
) -> GroupCoordinator:
    return consumer_coordinator(topic, clock, consumer_config(migration=policy))


async def classic_join(c: GroupCoordinator, member_id: str = "") -> JoinResult:
    request = JoinRequest(
        "g",
        member_id,
        None,
        "kp",
        "h",
        6000,
        9000,
        "consumer",
        [("range", subscription("A"))],
        False,
    )
    return await c.join(request)


async def consumer_beat(
    c: GroupCoordinator, epoch: int, holds: set[int] | None = None
) -> tuple[int, set[int] | None]:
    joining = epoch == 0
    answer = await c.consumer.heartbeat(
        HeartbeatRequest(
            "g",
            "c",
            epoch,
            rebalance_timeout_ms=5_000 if joining else -1,
            subscribed_topic_names=("A",) if joining else None,
            owned={} if joining or not holds else {"id-A": frozenset(holds)},
        ),
        1,
    )
    held = None if answer.assignment is None else set(answer.assignment.get("id-A", ()))
    return answer.member_epoch, held


async def classic_alone(c: GroupCoordinator) -> str:
    """One classic member holds all of A at generation 1, having committed offset 7."""
    joined = await classic_join(c)
    assert joined.leader == joined.member_id
    everything = write_assignment(0, {"A": [0, 1, 2, 3]})
    await c.sync("g", 1, joined.member_id, {joined.member_id: everything})
    await c.commit("g", 1, joined.member_id, {("A", 0): CommittedOffset(7, -1, None, 0)}, None, 7)
    return joined.member_id


@pytest.mark.asyncio
async def test_classic_and_consumer_members_share_a_group_and_it_turns_back() -> None:
    topic, clock = FakeOffsetsTopic(), Clock()
    c = make(topic, clock)
    k = await classic_alone(c)

    epoch, held = await consumer_beat(c, 0)  # the upgrade
    assert "g" not in c.groups and "g" in c.consumer.groups
    assert (epoch, held) == (2, set())  # everything is k's until k lets it go
    with pytest.raises(KafkaError) as told:
        c.heartbeat("g", 1, k)
    assert told.value.code == ErrorCode.rebalance_in_progress
    rejoined = await classic_join(c, k)  # eager: it gave everything up
    assert (rejoined.generation_id, rejoined.leader, rejoined.members) == (2, "", [])
    k_holds = partitions_of(await c.sync("g", 2, k, {}))["A"]
    c.heartbeat("g", 2, k)  # nothing more to do for k
    epoch, c_holds = await consumer_beat(c, 2, set())
    assert c_holds is not None and len(k_holds) == len(c_holds) == 2
    assert k_holds.isdisjoint(c_holds)
    assert c.consumer.groups["g"].state == ConsumerGroupState.STABLE
    await c.commit("g", 2, k, {("A", 1): CommittedOffset(4, -1, None, 0)}, None, 7)
    with pytest.raises(KafkaError) as stale:
        await c.commit("g", 1, k, {("A", 1): CommittedOffset(5, -1, None, 0)}, None, 7)
    assert stale.value.code == ErrorCode.illegal_generation

    reloaded = make(topic, clock)  # a new coordinator sees the classic member as classic
    assert reloaded.fetch_offsets("g")[("A", 1)].offset == 4
    assert reloaded.consumer.groups["g"].members[k].uses_classic_protocol

    await consumer_beat(c, -1)  # the downgrade: k is the only member left
    classic = c.groups["g"]
    assert "g" not in c.consumer.groups
    assert (classic.state, list(classic.members)) == (GroupState.PREPARING_REBALANCE, [k])
    with pytest.raises(KafkaError) as told:
        c.heartbeat("g", 2, k)
    assert told.value.code == ErrorCode.rebalance_in_progress
    again = await classic_join(c, k)
    assert (again.generation_id, again.leader) == (3, k)
    assert {o: v.offset for o, v in c.fetch_offsets("g").items()} == {("A", 0): 7, ("A", 1): 4}
    reloaded = make(topic, clock)
    assert reloaded.fetch_offsets("g")[("A", 0)].offset == 7
    assert "g" in reloaded.groups and "g" not in reloaded.consumer.groups  # the log agrees


@pytest.mark.asyncio
async def test_a_parked_classic_join_is_told_to_rejoin_when_the_group_upgrades() -> None:
    c = make(FakeOffsetsTopic(), Clock())
    k = await classic_alone(c)
    parked = asyncio.ensure_future(classic_join(c))  # a rebalance: waits for k to rejoin
    await asyncio.sleep(0)
    await consumer_beat(c, 0)
    answer = await parked
    assert answer.error == ErrorCode.rebalance_in_progress
    assert (await classic_join(c, answer.member_id)).error == ErrorCode.none
    assert set(c.consumer.groups["g"].members) == {k, answer.member_id, "c"}


@pytest.mark.asyncio
async def test_with_migration_disabled_a_consumer_member_cannot_join_a_live_classic_group() -> None:
    topic, clock = FakeOffsetsTopic(), Clock()
    c = make(topic, clock, MigrationPolicy.DISABLED)
    k = await classic_alone(c)
    with pytest.raises(KafkaError) as refused:
        await consumer_beat(c, 0)
    assert refused.value.code == ErrorCode.group_id_not_found
    c.heartbeat("g", 1, k)  # the classic group goes on undisturbed
    assert c.groups["g"].state == GroupState.STABLE


@pytest.mark.asyncio
async def test_with_upgrade_only_the_group_stays_a_consumer_group() -> None:
    c = make(FakeOffsetsTopic(), Clock(), MigrationPolicy.UPGRADE)
    k = await classic_alone(c)
    await consumer_beat(c, 0)
    await consumer_beat(c, -1)
    assert list(c.consumer.groups["g"].members) == [k] and "g" not in c.groups


@pytest.mark.asyncio
async def test_a_silent_classic_member_is_fenced_and_a_late_rejoin_is_unknown() -> None:
    clock = Clock()
    c = make(FakeOffsetsTopic(), clock)
    k = await classic_alone(c)
    await consumer_beat(c, 0)
    with pytest.raises(KafkaError):
        c.heartbeat("g", 1, k)  # told to rejoin, within its rebalance timeout (9 s)
    clock.now += 5_000
    clock.now += 5_000  # its session (6 s) ran out first
    c.tick()
    assert k not in c.consumer.groups["g"].members
    with pytest.raises(KafkaError) as gone:
        c.heartbeat("g", 1, k)
    assert gone.value.code == ErrorCode.unknown_member_id


@pytest.mark.asyncio
async def test_a_classic_member_that_joins_but_never_syncs_is_fenced() -> None:
    """Kafka's sync timeout: after its JoinGroup a classic member has its rebalance timeout
    (9 s) to send SyncGroup, heartbeats or not."""
    clock = Clock()
    c = make(FakeOffsetsTopic(), clock)
    k = await classic_alone(c)
    await consumer_beat(c, 0)
    await classic_join(c, k)  # generation 2 now; no SyncGroup follows
    for _ in range(2):
        clock.now += 4_000
        c.heartbeat("g", 2, k)  # its session goes on
        c.tick()
    assert k in c.consumer.groups["g"].members
    clock.now += 1_500
    c.tick()
    assert k not in c.consumer.groups["g"].members


@pytest.mark.asyncio
async def test_a_restarted_static_classic_member_takes_its_place_in_a_consumer_group() -> None:
    """KIP-345 inside a converted group: a kafka-python static member comes back under a
    new member id with its instance id; it replaces its old self at once (a classic
    client sends no "leaving for now"), keeps its partitions, and its old id is fenced."""
    c = make(FakeOffsetsTopic(), Clock())
    request = JoinRequest(
        "g", "", "i-1", "kp", "h", 6000, 9000, "consumer", [("range", subscription("A"))], True
    )
    old = await c.join(request)
    assert old.error == ErrorCode.none  # a static member needs no member id first
    everything = write_assignment(0, {"A": [0, 1, 2, 3]})
    await c.sync("g", 1, old.member_id, {old.member_id: everything}, "i-1")
    await consumer_beat(c, 0)  # the upgrade: the classic group had a static member
    back = await c.join(request)  # restarted: no member id
    assert back.error == ErrorCode.none and back.member_id != old.member_id
    held = partitions_of(await c.sync("g", back.generation_id, back.member_id, {}, "i-1"))
    assert held["A"]  # its share of A, without waiting for its old self to time out
    with pytest.raises(KafkaError) as fenced:
        c.heartbeat("g", 1, old.member_id, "i-1")
    assert fenced.value.code == ErrorCode.fenced_instance_id


async def static_consumer_alone(c: GroupCoordinator) -> None:
    """A static member of the consumer protocol (c, instance i) holds all of A at epoch 1,
    having committed offset 7 of A-0."""
    answer = await c.consumer.heartbeat(
        HeartbeatRequest(
            "g", "c", 0, "i", rebalance_timeout_ms=5_000, subscribed_topic_names=("A",), owned={}
        ),
        1,
    )
    assert (answer.member_epoch, answer.assignment) == (1, {"id-A": frozenset({0, 1, 2, 3})})
    await c.commit("g", 1, "c", {("A", 0): CommittedOffset(7, -1, None, 0)}, "i")


@pytest.mark.asyncio
@pytest.mark.parametrize("left_for_now", [True, False])
async def test_a_classic_static_member_replacing_the_last_consumer_member_downgrades_at_once(
    left_for_now: bool,
) -> None:
    """Kafka 4.0: the consumer-protocol member closed as a static member does (member epoch
    -2: it keeps its place) or crashed; a kafka-python member with its instance id joins.
    The group is classic at once, stable, the newcomer holding what c held: the JoinGroup
    names no leader, the SyncGroup gives the partitions, heartbeats find no rebalance, and
    the committed offset is there for it to resume from."""
    topic, clock = FakeOffsetsTopic(), Clock()
    c = make(topic, clock)
    await static_consumer_alone(c)
    if left_for_now:
        await c.consumer.heartbeat(HeartbeatRequest("g", "c", -2, "i"), 1)
    joined = await c.join(static_join("A"))
    assert (joined.error, joined.generation_id, joined.leader, joined.members) == (
        ErrorCode.none,
        1,
        "",
        [],
    )
    assert "g" not in c.consumer.groups
    classic = c.groups["g"]
    assert (classic.state, classic.generation_id) == (GroupState.STABLE, 1)
    assert list(classic.members) == [joined.member_id]
    held = partitions_of(await c.sync("g", 1, joined.member_id, {}, "i"))
    assert held == {"A": {0, 1, 2, 3}}
    c.heartbeat("g", 1, joined.member_id, "i")  # no rebalance follows
    assert c.fetch_offsets("g")[("A", 0)].offset == 7
    with pytest.raises(KafkaError) as gone:  # c, had it been running still
        await c.consumer.heartbeat(HeartbeatRequest("g", "c", 1, "i"), 1)
    assert gone.value.code == ErrorCode.group_id_not_found
    reloaded = make(topic, clock)  # the log agrees
    assert reloaded.fetch_offsets("g")[("A", 0)].offset == 7
    assert "g" in reloaded.groups and "g" not in reloaded.consumer.groups


@pytest.mark.asyncio
async def test_a_replacing_classic_member_with_another_subscription_rebalances_the_group() -> None:
    """KAFKA-19546 (merged for Kafka 4.0.2): the newcomer subscribes to more than c did, so the
    classic group rebalances at once; the JoinGroup's generation is 0 (not reconciled) and
    the newcomer joins the rebalance, the group's leader this time."""
    c = make(FakeOffsetsTopic(), Clock())
    await static_consumer_alone(c)
    joined = await c.join(static_join("A", "B"))
    assert (joined.error, joined.generation_id) == (ErrorCode.none, 0)
    assert c.groups["g"].state == GroupState.PREPARING_REBALANCE
    again = await c.join(static_join("A", "B", member_id=joined.member_id))
    assert (again.generation_id, again.leader) == (2, joined.member_id)


@pytest.mark.asyncio
async def test_with_downgrade_disabled_a_replaced_static_member_leaves_a_consumer_group() -> None:
    """``group.consumer.migration.policy=upgrade``: the newcomer takes c's place and
    partitions, as a classic member of what stays a consumer group."""
    c = make(FakeOffsetsTopic(), Clock(), MigrationPolicy.UPGRADE)
    await static_consumer_alone(c)
    joined = await c.join(static_join("A"))
    assert (joined.error, joined.generation_id) == (ErrorCode.none, 1)
    assert "g" not in c.groups
    assert list(c.consumer.groups["g"].members) == [joined.member_id]
    assert c.consumer.groups["g"].members[joined.member_id].uses_classic_protocol
    held = partitions_of(await c.sync("g", 1, joined.member_id, {}, "i"))
    assert held == {"A": {0, 1, 2, 3}}


@pytest.mark.asyncio
async def test_a_classic_members_old_generation_is_illegal_not_stale() -> None:
    """Kafka's ``validateMemberEpoch``: a classic member at another generation gets
    ILLEGAL_GENERATION (what its client understands), a consumer-protocol member at
    another epoch STALE_MEMBER_EPOCH; for OffsetFetch as for OffsetCommit."""
    c = make(FakeOffsetsTopic(), Clock())
    k = await classic_alone(c)
    await consumer_beat(c, 0)
    group = c.consumer.groups["g"]
    for member_id, error in (
        (k, ErrorCode.illegal_generation),
        ("c", ErrorCode.stale_member_epoch),
    ):
        with pytest.raises(KafkaError) as refused:
            group.validate_offset_fetch(member_id, 7)
        assert refused.value.code == error
