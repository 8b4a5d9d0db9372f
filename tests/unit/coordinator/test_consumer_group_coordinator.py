"""The consumer-group coordinator (KIP-848) with a log the test holds and a clock it moves:
sessions and revocation deadlines fence members, a new coordinator rebuilds every group
from the log, and classic and consumer groups share the group id space as in Kafka 4.0
(converting a group with members: ``test_group_migration``)."""

from __future__ import annotations

import pytest

from kafkalite.coordinator.group.consumer_group import ConsumerGroupState
from kafkalite.coordinator.group.consumer_group_heartbeat import HeartbeatRequest
from kafkalite.coordinator.group.consumer_member import MemberState
from kafkalite.coordinator.group.coordinator import GroupCoordinator
from kafkalite.coordinator.group.join_group import JoinRequest
from kafkalite.coordinator.group.offsets_log import CommittedOffset
from kafkalite.protocol.errors import ErrorCode, KafkaError
from tests.unit.coordinator.fakes import (
    Clock,
    FakeOffsetsTopic,
    consumer_config,
    consumer_coordinator,
)

pytestmark = [pytest.mark.unit, pytest.mark.asyncio]

SESSION_MS = 10_000


def make(topic: FakeOffsetsTopic, clock: Clock) -> GroupCoordinator:
    return consumer_coordinator(topic, clock, consumer_config(session_ms=SESSION_MS))


def owned(partitions: set[int] | None) -> dict[str, frozenset[int]] | None:
    return None if partitions is None else ({"id-A": frozenset(partitions)} if partitions else {})


async def beat(
    c: GroupCoordinator, member: str, epoch: int, holds: set[int] | None = None, group: str = "g"
):
    joining = epoch == 0
    return await c.consumer.heartbeat(
        HeartbeatRequest(
            group,
            member,
            epoch,
            rebalance_timeout_ms=5_000 if joining else -1,
            subscribed_topic_names=("A",) if joining else None,
            owned=owned(set() if joining else holds),
        ),
        1,
    )


async def two_members(c: GroupCoordinator) -> set[int]:
    """m1 then m2 join and settle; returns m1's partitions."""
    await beat(c, "m1", 0)
    await beat(c, "m2", 0)
    revoking = await beat(c, "m1", 1, {0, 1, 2, 3})
    assert revoking.assignment is not None
    kept = set(revoking.assignment["id-A"])
    await beat(c, "m1", 1, kept)
    await beat(c, "m2", 2, set())
    assert c.consumer.groups["g"].state == ConsumerGroupState.STABLE
    return kept


async def test_a_silent_member_is_fenced_when_its_session_runs_out() -> None:
    clock = Clock()
    c = make(FakeOffsetsTopic(), clock)
    kept = await two_members(c)
    clock.now = SESSION_MS - 1
    await beat(c, "m1", 2, kept)  # m1 heartbeats, m2 does not
    c.tick()
    assert set(c.consumer.groups["g"].members) == {"m1", "m2"}
    clock.now = SESSION_MS + 1
    c.tick()
    assert set(c.consumer.groups["g"].members) == {"m1"}
    back = await beat(c, "m1", 2, kept)
    assert back.assignment == {"id-A": frozenset({0, 1, 2, 3})}


async def test_a_member_that_does_not_revoke_in_its_rebalance_timeout_is_fenced() -> None:
    clock = Clock()
    c = make(FakeOffsetsTopic(), clock)
    await beat(c, "m1", 0)
    await beat(c, "m2", 0)
    await beat(c, "m1", 1, {0, 1, 2, 3})  # asked to revoke two
    assert c.consumer.groups["g"].members["m1"].state == MemberState.UNREVOKED_PARTITIONS
    for now in (2_000, 4_000):  # it keeps heartbeating, still holding them
        clock.now = now
        await beat(c, "m1", 1, {0, 1, 2, 3})
        await beat(c, "m2", 2, set())
        c.tick()
    clock.now = 5_001
    c.tick()
    assert set(c.consumer.groups["g"].members) == {"m2"}
    with pytest.raises(KafkaError) as fenced:
        await beat(c, "m1", 1, {0, 1, 2, 3})
    assert fenced.value.code == ErrorCode.unknown_member_id


async def test_a_new_coordinator_rebuilds_the_group_from_the_log() -> None:
    topic, clock = FakeOffsetsTopic(), Clock()
    c = make(topic, clock)
    kept = await two_members(c)
    before = c.consumer.groups["g"]
    successor = make(topic, clock)
    successor.check_coordinator("g")
    assert successor.consumer.groups["g"] == before
    # the members carry on with the successor at the epochs they have
    assert (await beat(successor, "m1", 2, kept)).member_epoch == 2
    clock.now = SESSION_MS // 2
    successor.tick()  # their sessions start with the new coordinator
    assert set(successor.consumer.groups["g"].members) == {"m1", "m2"}


async def test_a_member_commits_at_its_epoch_only() -> None:
    c = make(FakeOffsetsTopic(), Clock())
    await beat(c, "m1", 0)
    offsets = {("A", 0): CommittedOffset(7, -1, None, 0)}
    await c.commit("g", 1, "m1", offsets, api_version=9)
    for epoch, member, version, error in (
        (0, "m1", 9, ErrorCode.stale_member_epoch),
        (1, "m9", 9, ErrorCode.unknown_member_id),
        (1, "m1", 8, ErrorCode.unsupported_version),
        (-1, "", 9, ErrorCode.unknown_member_id),  # a live group takes no anonymous commit
    ):
        with pytest.raises(KafkaError) as refused:
            await c.commit("g", epoch, member, offsets, api_version=version)
        assert refused.value.code == error
    assert c.fetch_offsets("g")[("A", 0)].offset == 7


async def test_an_empty_classic_group_becomes_a_consumer_group_keeping_its_offsets() -> None:
    topic, clock = FakeOffsetsTopic(), Clock()
    c = make(topic, clock)
    offsets = {("A", 0): CommittedOffset(3, -1, None, 0)}
    await c.commit("g", -1, "", offsets)  # a simple (classic) group
    assert "g" in c.groups
    await beat(c, "m1", 0)
    assert "g" not in c.groups and "g" in c.consumer.groups
    assert c.fetch_offsets("g")[("A", 0)].offset == 3
    reloaded = make(topic, clock)
    assert reloaded.fetch_offsets("g")[("A", 0)].offset == 3
    assert "g" not in reloaded.groups and "g" in reloaded.consumer.groups


async def test_a_classic_group_whose_metadata_is_not_the_consumer_protocols_stays_classic() -> None:
    """Its members' subscriptions cannot be read: it cannot be converted (online
    migration itself: ``test_group_migration``)."""
    c = make(FakeOffsetsTopic(), Clock())
    join = JoinRequest("g", "", None, "c", "h", 6000, 6000, "consumer", [("range", b"")], False)
    assert (await c.join(join)).error == ErrorCode.none
    with pytest.raises(KafkaError) as refused:
        await beat(c, "m1", 0)
    assert refused.value.code == ErrorCode.group_id_not_found


async def test_a_classic_member_with_unreadable_metadata_cannot_join_a_live_consumer_group() -> (
    None
):
    """An empty consumer group gives way to it; a live one cannot take it in."""
    topic, clock = FakeOffsetsTopic(), Clock()
    c = make(topic, clock)
    await beat(c, "m1", 0)
    join = JoinRequest("g", "", None, "c", "h", 6000, 6000, "consumer", [("range", b"")], False)
    assert (await c.join(join)).error == ErrorCode.inconsistent_group_protocol
    await beat(c, "m1", -1)  # the last member leaves: the group is empty
    assert (await c.join(join)).error == ErrorCode.none
    assert "g" not in c.consumer.groups and "g" in c.groups
    assert "g" not in make(topic, clock).consumer.groups  # its records were deleted


async def test_deleting_an_empty_consumer_group() -> None:
    topic, clock = FakeOffsetsTopic(), Clock()
    c = make(topic, clock)
    await beat(c, "m1", 0)
    assert await c.delete_group("g") == ErrorCode.non_empty_group
    await beat(c, "m1", -1)
    assert await c.delete_group("g") == ErrorCode.none
    assert "g" not in c.consumer.groups
    assert "g" not in make(topic, clock).consumer.groups
