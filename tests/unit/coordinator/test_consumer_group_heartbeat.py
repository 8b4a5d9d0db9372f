"""ConsumerGroupHeartbeat driven directly, as the coordinator drives it: each heartbeat's
records are replayed into the groups (the only way they change), and replaying every
record written so far into an empty coordinator must give the same groups (a failover)."""

from __future__ import annotations

import pytest

from kafkalite.coordinator.group.assignors import ASSIGNORS
from kafkalite.coordinator.group.consumer_group import (
    ConsumerGroup,
    ConsumerGroupState,
)
from kafkalite.coordinator.group.consumer_group_heartbeat import (
    HeartbeatOutcome,
    HeartbeatRequest,
    heartbeat,
    leave,
    validate,
)
from kafkalite.coordinator.group.consumer_group_records import GroupRecord, replay
from kafkalite.coordinator.group.consumer_member import MemberState
from kafkalite.protocol.errors import ErrorCode, KafkaError
from tests.unit.coordinator.fakes import FakeTopics

pytestmark = pytest.mark.unit

GROUP = "g"


class Coordinator:
    def __init__(self, topics: FakeTopics) -> None:
        self.topics = topics
        self.groups: dict[str, ConsumerGroup] = {}
        self.log: list[GroupRecord] = []

    def beat(self, member_id: str, epoch: int, owned: set[int] | None = None, **kw: object):
        request = HeartbeatRequest(
            GROUP,
            member_id,
            epoch,
            owned=None if owned is None else ({"id-A": frozenset(owned)} if owned else {}),
            **kw,  # type: ignore[arg-type]
        )
        validate(request, 1, ASSIGNORS)
        group = self.groups.get(GROUP)
        if epoch < 0:
            outcome = leave(group, request, self.topics)
        else:
            outcome = heartbeat(group, request, self.topics, ASSIGNORS, max_size=100)
        for key, value in outcome.records:
            replay(self.groups, key, value)
        self.log.extend(outcome.records)
        return outcome

    def join(self, member_id: str, **kw: object) -> HeartbeatOutcome:
        kw.setdefault("subscribed_topic_names", ("A",))
        return self.beat(member_id, 0, set(), rebalance_timeout_ms=30000, **kw)

    @property
    def group(self) -> ConsumerGroup:
        return self.groups[GROUP]

    def reloaded(self) -> ConsumerGroup:
        groups: dict[str, ConsumerGroup] = {}
        for key, value in self.log:
            replay(groups, key, value)
        return groups[GROUP]


def partitions(outcome: HeartbeatOutcome) -> set[int] | None:
    if outcome.assignment is None:
        return None
    return set(outcome.assignment.get("id-A", frozenset()))


def test_the_first_member_gets_every_partition_at_epoch_1() -> None:
    c = Coordinator(FakeTopics(A=4))
    joined = c.join("m1")
    assert (joined.member_epoch, partitions(joined)) == (1, {0, 1, 2, 3})
    assert c.group.state == ConsumerGroupState.STABLE
    assert (c.group.group_epoch, c.group.assignment_epoch) == (1, 1)


def test_a_second_member_is_given_half_incrementally_never_two_owners() -> None:
    c = Coordinator(FakeTopics(A=4))
    c.join("m1")
    m2 = c.join("m2")
    # m2 is at the new epoch but its partitions are still m1's: it gets none yet
    assert (m2.member_epoch, partitions(m2)) == (2, set())
    assert c.group.members["m2"].state == MemberState.UNRELEASED_PARTITIONS
    assert c.group.state == ConsumerGroupState.RECONCILING
    # m1 must revoke what m2's target holds, staying at epoch 1 meanwhile
    m1 = c.beat("m1", 1, {0, 1, 2, 3})
    assert m1.member_epoch == 1
    kept = partitions(m1)
    assert kept is not None and len(kept) == 2
    assert c.group.members["m1"].state == MemberState.UNREVOKED_PARTITIONS
    # m2 still waits: m1 has not let them go
    assert partitions(c.beat("m2", 2, set())) is None
    # m1 reports them gone: it moves to epoch 2; then m2 gets them
    assert c.beat("m1", 1, kept).member_epoch == 2
    m2 = c.beat("m2", 2, set())
    assert partitions(m2) == {0, 1, 2, 3} - kept
    assert c.group.state == ConsumerGroupState.STABLE
    assert c.reloaded() == c.group


def test_a_member_that_leaves_has_its_partitions_given_to_the_others() -> None:
    c = Coordinator(FakeTopics(A=4))
    c.join("m1")
    c.join("m2")
    kept = partitions(c.beat("m1", 1, {0, 1, 2, 3}))
    assert kept is not None
    c.beat("m1", 1, kept)
    c.beat("m2", 2, set())
    assert c.beat("m2", -1).member_epoch == -1
    assert "m2" not in c.group.members and c.group.group_epoch == 3
    assert c.group.state == ConsumerGroupState.ASSIGNING
    back = c.beat("m1", 2, kept)
    assert (back.member_epoch, partitions(back)) == (3, {0, 1, 2, 3})
    assert c.reloaded() == c.group


def test_an_unknown_epoch_is_fenced_but_a_lost_answer_is_forgiven() -> None:
    c = Coordinator(FakeTopics(A=2))
    c.join("m1")
    with pytest.raises(KafkaError) as fenced:
        c.beat("m1", 7, {0, 1})
    assert fenced.value.code == ErrorCode.fenced_member_epoch
    c.join("m2")
    c.beat("m1", 1, {0, 1})  # revoking one
    c.beat("m1", 1, {0})  # now at epoch 2, previous 1
    # the answer that moved it to 2 was lost: it still says 1, holding a subset: accepted
    assert c.beat("m1", 1, {0}).member_epoch == 2
    with pytest.raises(KafkaError) as stale:
        c.beat("m1", 1, {0, 1})  # ...but not while claiming a partition it gave up
    assert stale.value.code == ErrorCode.fenced_member_epoch


def test_a_heartbeat_from_a_member_the_group_does_not_know() -> None:
    c = Coordinator(FakeTopics(A=2))
    c.join("m1")
    with pytest.raises(KafkaError) as unknown:
        c.beat("m9", 1, set())
    assert unknown.value.code == ErrorCode.unknown_member_id


def test_a_topic_created_after_the_subscription_is_assigned_at_the_next_heartbeat() -> None:
    topics = FakeTopics(A=1)
    c = Coordinator(topics)
    joined = c.join("m1", subscribed_topic_names=("A", "B"))
    assert joined.member_epoch == 1
    topics.add("B", 2)
    beat = c.beat("m1", 1, {0})
    assert beat.member_epoch == 2
    assert beat.assignment == {"id-A": frozenset({0}), "id-B": frozenset({0, 1})}


def test_a_regex_subscription_follows_the_topics_that_match() -> None:
    topics = FakeTopics(A=1, other=1)
    c = Coordinator(topics)
    joined = c.beat("m1", 0, set(), rebalance_timeout_ms=1000, subscribed_topic_regex="A|B")
    assert joined.assignment == {"id-A": frozenset({0})}
    topics.add("B", 1)
    assert c.beat("m1", 1, {0}).assignment == {"id-A": frozenset({0}), "id-B": frozenset({0})}


def test_a_static_member_that_leaves_for_now_keeps_its_place() -> None:
    c = Coordinator(FakeTopics(A=2))
    c.join("s1", instance_id="i1")
    c.join("m2")
    c.beat("s1", 1, {0, 1})
    held = c.group.members["s1"].assigned_partitions
    c.beat("s1", 1, set(held["id-A"]))
    epoch = c.group.group_epoch
    assert c.beat("s1", -2, instance_id="i1").member_epoch == -2
    assert c.group.group_epoch == epoch  # no rebalance
    with pytest.raises(KafkaError) as taken:
        c.join("s9", instance_id="i2")  # another instance is fine...
        c.beat(
            "s1", 0, set(), rebalance_timeout_ms=1, subscribed_topic_names=("A",), instance_id="i2"
        )
    assert taken.value.code == ErrorCode.unreleased_instance_id
    back = c.join("s1-new", instance_id="i1")  # ...and i1 comes back under a new member id
    assert back.assignment == held
    assert "s1" not in c.group.members
    assert c.reloaded() == c.group


@pytest.mark.parametrize(
    ("request_", "error"),
    [
        (
            HeartbeatRequest(GROUP, "m", 0, owned={}, subscribed_topic_names=()),
            "RebalanceTimeoutMs",
        ),
        (HeartbeatRequest(GROUP, "", 0, rebalance_timeout_ms=1, owned={}), "MemberId"),
        (HeartbeatRequest(GROUP, "m", 0, rebalance_timeout_ms=1, owned={}), "SubscribedTopic"),
        (HeartbeatRequest(GROUP, "m", -3), "MemberEpoch is invalid"),
    ],
)
def test_bad_heartbeats_are_refused_with_kafkas_words(request_: HeartbeatRequest, error: str):
    with pytest.raises(KafkaError) as refused:
        validate(request_, 1, ASSIGNORS)
    assert refused.value.code == ErrorCode.invalid_request
    assert error in str(refused.value.message)


def test_an_assignor_the_broker_does_not_offer_is_refused() -> None:
    request = HeartbeatRequest(GROUP, "m", 1, server_assignor="sticky")
    with pytest.raises(KafkaError) as refused:
        validate(request, 1, ASSIGNORS)
    assert refused.value.code == ErrorCode.unsupported_assignor
