"""One member's reconciliation step (Kafka's CurrentAssignmentBuilder), driven directly:
revoke first, then take what is free, wait for what others still hold."""

from __future__ import annotations

import pytest

from kafkalite.coordinator.group.consumer_member import ConsumerGroupMember, MemberState
from kafkalite.coordinator.group.reconciliation import reconcile

pytestmark = pytest.mark.unit


def fs(*ps: int) -> frozenset[int]:
    return frozenset(ps)


def free(topic_id: str, partition: int) -> int:
    return -1


def test_a_member_that_must_give_partitions_up_stays_at_its_epoch_until_it_has() -> None:
    member = ConsumerGroupMember("m1", member_epoch=1, assigned_partitions={"A": fs(0, 1, 2)})
    step = reconcile(member, 2, {"A": fs(0, 1)}, free, {"A": fs(0, 1, 2)})
    assert step.state == MemberState.UNREVOKED_PARTITIONS
    assert step.member_epoch == 1
    assert step.assigned_partitions == {"A": fs(0, 1)}
    assert step.partitions_pending_revocation == {"A": fs(2)}
    # its next heartbeat still lists partition 2: nothing moves
    assert reconcile(step, 2, {"A": fs(0, 1)}, free, {"A": fs(0, 1, 2)}) is step
    # it no longer does: it reaches epoch 2
    done = reconcile(step, 2, {"A": fs(0, 1)}, free, {"A": fs(0, 1)})
    assert (done.state, done.member_epoch, done.previous_member_epoch) == (
        MemberState.STABLE,
        2,
        1,
    )
    assert done.partitions_pending_revocation == {}


def test_a_partition_another_member_holds_is_not_handed_out_yet() -> None:
    member = ConsumerGroupMember("m2", member_epoch=0)

    def held_by_m1(topic_id: str, partition: int) -> int:
        return 1 if partition == 2 else -1

    step = reconcile(member, 2, {"A": fs(2, 3)}, held_by_m1, {})
    assert step.state == MemberState.UNRELEASED_PARTITIONS
    assert step.member_epoch == 2
    assert step.assigned_partitions == {"A": fs(3)}
    later = reconcile(step, 2, {"A": fs(2, 3)}, free, {"A": fs(3)})
    assert later.state == MemberState.STABLE
    assert later.assigned_partitions == {"A": fs(2, 3)}


def test_partitions_already_revoked_are_not_waited_for() -> None:
    member = ConsumerGroupMember("m1", member_epoch=1, assigned_partitions={"A": fs(0, 1)})
    step = reconcile(member, 2, {"A": fs(0)}, free, {"A": fs(0)})
    assert (step.state, step.member_epoch) == (MemberState.STABLE, 2)


def test_a_member_reconciled_to_the_target_is_left_alone() -> None:
    member = ConsumerGroupMember("m1", member_epoch=3, assigned_partitions={"A": fs(0)})
    assert reconcile(member, 3, {"A": fs(0)}, free, None) is member


def test_a_member_that_does_not_say_what_it_owns_is_taken_to_own_everything() -> None:
    member = ConsumerGroupMember("m1", member_epoch=1, assigned_partitions={"A": fs(0, 1)})
    step = reconcile(member, 2, {"A": fs(0)}, free, None)
    assert step.state == MemberState.UNREVOKED_PARTITIONS
