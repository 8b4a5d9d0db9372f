"""The classic group protocol's state machine (``coordinator/group/group.py``), driven
directly: states, transitions, generations, leaders, protocol choice, expiry, static
members, the initial delay. No coordinator, no clock but the numbers passed in."""

from __future__ import annotations

import pytest

from kafkalite.coordinator.group.group import (
    Group,
    GroupState,
    IllegalTransitionError,
    Member,
)

pytestmark = pytest.mark.unit
S = GroupState


def member(member_id: str, *protocols: str, instance: str | None = None, **times: int) -> Member:
    return Member(
        member_id,
        "client",
        "host",
        times.get("session", 10_000),
        times.get("rebalance", 30_000),
        [(p, p.encode()) for p in protocols or ("range",)],
        group_instance_id=instance,
    )


def joined_group(*members: Member) -> Group:
    """A group whose members have all joined a first rebalance (CompletingRebalance)."""
    group = Group("g")
    for m in members:
        group.add_member(m, "consumer")
    group.prepare_rebalance(now_ms=0)
    for m in members:
        m.joined = True
    group.complete_join(now_ms=0)
    return group


def test_a_rebalance_runs_empty_preparing_completing_stable_and_bumps_the_generation() -> None:
    group = Group("g")
    assert group.state == S.EMPTY
    a, b = member("a"), member("b")
    group.add_member(a, "consumer")
    group.add_member(b, "consumer")
    group.prepare_rebalance(now_ms=100)
    assert group.state == S.PREPARING_REBALANCE
    assert group.rebalance_deadline_ms == 100 + 30_000
    assert not group.ready_to_complete_join(now_ms=200)  # nobody has rejoined yet
    a.joined = b.joined = True
    assert group.ready_to_complete_join(now_ms=200)
    assert group.complete_join(now_ms=0) == []
    assert (group.state, group.generation_id, group.leader_id) == (S.COMPLETING_REBALANCE, 1, "a")
    group.complete_sync(now_ms=0, assignments={"a": b"partitions of a", "b": b"partitions of b"})
    assert group.state == S.STABLE
    assert (a.assignment, b.assignment) == (b"partitions of a", b"partitions of b")
    group.prepare_rebalance(now_ms=300)  # someone joins or leaves: everyone must rejoin
    assert group.state == S.PREPARING_REBALANCE and not a.joined


@pytest.mark.parametrize(
    ("start", "target"),
    [
        (S.EMPTY, S.STABLE),
        (S.EMPTY, S.COMPLETING_REBALANCE),
        (S.STABLE, S.COMPLETING_REBALANCE),
        (S.STABLE, S.EMPTY),
        (S.DEAD, S.EMPTY),
        (S.DEAD, S.PREPARING_REBALANCE),
    ],
)
def test_transitions_kafka_does_not_allow_are_refused(
    start: GroupState, target: GroupState
) -> None:
    group = Group("g", state=start)
    with pytest.raises(IllegalTransitionError):
        group.transition(target)
    assert group.state == start


def test_who_does_not_rejoin_is_dropped_and_the_leader_moves_on() -> None:
    group = joined_group(member("a"), member("b"), member("c"))
    group.complete_sync(now_ms=0, assignments={})
    group.prepare_rebalance(now_ms=0)
    group.members["b"].joined = group.members["c"].joined = True  # the leader a is gone
    assert group.complete_join(now_ms=0) == ["a"]
    assert (group.generation_id, group.leader_id) == (2, "b")


def test_a_rebalance_nobody_rejoins_leaves_the_group_empty_in_a_new_generation() -> None:
    group = joined_group(member("a"))
    group.complete_sync(now_ms=0, assignments={})
    group.prepare_rebalance(now_ms=0)
    assert group.complete_join(now_ms=0) == ["a"]
    assert (group.state, group.generation_id) == (S.EMPTY, 2)
    assert (group.leader_id, group.protocol_name) == (None, None)


def test_a_static_member_that_does_not_rejoin_keeps_its_place_in_the_next_generation() -> None:
    """Kafka's ``completeClassicGroupJoin`` drops only the dynamic members that did not
    rejoin: a static one (restarting, or slow) stays, in the assignment, until its session
    runs out. Its leadership goes to a member that rejoined."""
    group = joined_group(member("s", instance="pod-s"), member("a"), member("gone"))
    group.complete_sync(now_ms=0, assignments={"s": b"s's partitions"})
    group.prepare_rebalance(now_ms=0)
    group.members["a"].joined = True
    assert group.complete_join(now_ms=500) == ["gone"]
    assert (group.state, group.generation_id) == (S.COMPLETING_REBALANCE, 2)
    assert group.static_member("pod-s") == "s" and group.leader_id == "a"
    assert group.members["s"].last_heartbeat_ms == 500  # its session starts over too
    assert group.expired_members(now_ms=10_500) == []
    assert group.expired_members(now_ms=10_501) == ["s", "a"]  # neither heartbeat since


def test_a_join_phase_no_member_rejoined_waits_for_the_static_members_sessions() -> None:
    """Only static members that did not rejoin are left: no generation can be formed
    (Kafka's ``maybeElectNewJoinedLeader`` is false), so the phase waits another rebalance
    timeout while their sessions run out."""
    group = joined_group(member("s", instance="pod-s", rebalance=4_000), member("a"))
    group.complete_sync(now_ms=0, assignments={})
    group.prepare_rebalance(now_ms=0)
    assert group.complete_join(now_ms=30_000) == ["a"]
    assert (group.state, group.generation_id, group.leader_id) == (S.PREPARING_REBALANCE, 1, "s")
    assert group.rebalance_deadline_ms == 34_000
    group.remove_member("s")  # its session ran out
    assert group.complete_join(now_ms=35_000) == []
    assert (group.state, group.generation_id) == (S.EMPTY, 2)


def test_the_protocol_most_members_prefer_among_those_all_support_wins() -> None:
    group = joined_group(
        member("a", "cooperative-sticky", "range"),
        member("b", "range", "cooperative-sticky"),
        member("c", "range", "roundrobin", "cooperative-sticky"),
    )
    assert group.protocol_name == "range"


def test_a_joiner_must_share_the_protocol_type_and_a_protocol() -> None:
    group = joined_group(member("a", "range", "roundrobin"))
    assert group.supports("consumer", [("roundrobin", b"")])
    assert not group.supports("consumer", [("sticky", b"")])
    assert not group.supports("connect", [("range", b"")])
    assert not group.supports("consumer", [])
    assert Group("empty").supports("anything", [("x", b"")])


def test_a_silent_member_expires_but_one_waiting_in_a_rebalance_does_not() -> None:
    group = joined_group(member("a", session=1_000), member("b", session=1_000))
    group.complete_sync(now_ms=0, assignments={})
    group.members["a"].last_heartbeat_ms = 5_000
    assert group.expired_members(now_ms=5_800) == ["b"]
    group.prepare_rebalance(now_ms=5_800)
    group.members["b"].joined = True  # b's JoinGroup is parked, waiting for the others
    assert group.expired_members(now_ms=9_000) == ["a"]


def test_a_long_join_does_not_eat_the_session_the_member_needs_to_sync() -> None:
    """The leader rejoined at once and waited 8 s in JoinGroup for a slow member (within the
    rebalance timeout, beyond its 6 s session): it gets its whole session from the join's
    answer to send SyncGroup, as in Kafka. This is how a kafka-python group leader was
    expired right after JoinGroup on a loaded machine."""
    leader, slow = member("leader", session=6_000), member("slow", session=6_000)
    group = joined_group(leader, slow)
    group.complete_sync(now_ms=0, assignments={})
    group.prepare_rebalance(now_ms=1_000)
    leader.joined, leader.last_heartbeat_ms = True, 1_000
    slow.joined, slow.last_heartbeat_ms = True, 9_000
    assert group.ready_to_complete_join(now_ms=9_000)
    group.complete_join(now_ms=9_000)
    assert group.expired_members(now_ms=9_100) == []
    assert group.expired_members(now_ms=15_001) == ["leader", "slow"]  # then silence counts


def test_a_member_waiting_in_sync_group_is_kept_until_the_assignment_arrives() -> None:
    leader, follower = member("leader", session=1_000), member("follower", session=1_000)
    group = joined_group(leader, follower)  # CompletingRebalance since t=0
    follower.awaiting_sync = True  # its SyncGroup is held for the leader's assignment
    assert group.expired_members(now_ms=1_500) == ["leader"]  # the leader must sync in time
    group.complete_sync(now_ms=1_400, assignments={"follower": b"p0"})
    assert not follower.awaiting_sync
    assert group.expired_members(now_ms=2_300) == ["leader"]  # follower: session from 1.4 s
    assert group.expired_members(now_ms=2_401) == ["leader", "follower"]


def test_a_restarted_static_member_takes_its_place_and_its_old_id_is_fenced() -> None:
    group = joined_group(member("old-a", instance="pod-a"), member("b"))
    group.complete_sync(now_ms=0, assignments={"old-a": b"a's partitions"})
    assert group.replace_static_member("pod-a", "new-a") == "old-a"
    assert group.members["new-a"].assignment == b"a's partitions"
    assert group.leader_id == "new-a"
    assert group.state == S.STABLE  # no rebalance for the others
    assert group.is_fenced_instance("old-a", "pod-a")
    assert not group.is_fenced_instance("new-a", "pod-a")
    group.remove_member("new-a")
    assert group.static_member("pod-a") is None


def test_the_first_rebalance_waits_the_initial_delay_extended_up_to_the_deadline() -> None:
    group = Group("g")
    a = member("a", rebalance=5_000)
    group.add_member(a, "consumer")
    group.prepare_rebalance(now_ms=0, initial_delay_ms=3_000)
    a.joined = True
    assert not group.ready_to_complete_join(now_ms=2_999)
    group.extend_initial_delay(now_ms=2_500, initial_delay_ms=3_000)  # b arrives
    assert group.initial_delay_until_ms == 5_000  # capped by the rebalance deadline
    assert group.ready_to_complete_join(now_ms=5_000)
    group.complete_join(now_ms=0)
    group.complete_sync(now_ms=0, assignments={})
    group.prepare_rebalance(now_ms=10_000, initial_delay_ms=3_000)
    assert group.initial_delay_until_ms == 0  # only an empty group's first rebalance waits
