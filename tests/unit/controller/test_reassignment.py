"""Moving a partition's replicas: the controller's steps, replayed as the log would."""

from __future__ import annotations

import pytest

from kafkalite.controller.topic_control import CreatableTopic
from kafkalite.protocol.errors import ErrorCode
from tests.unit.controller.test_quorum_controller import Harness

pytestmark = pytest.mark.unit


def moved(brokers: int = 4, replicas: tuple[int, ...] = (1, 2, 3)) -> Harness:
    h = Harness(brokers)
    h.commit(
        h.controller.create_topics(
            [CreatableTopic("moving", 1, len(replicas), assignments={0: replicas})]
        ).records
    )
    return h


def reassign(h: Harness, target: tuple[int, ...] | None) -> ErrorCode:
    result = h.controller.alter_partition_reassignments([("moving", 0, target)])
    h.commit(result.records)
    return result.response[0][2].error


def isr_change(h: Harness, new_isr: tuple[int, ...]) -> ErrorCode:
    reg = h.image.partition("moving", 0)
    assert reg is not None
    broker = h.image.brokers[reg.leader]
    result = h.controller.alter_partition(
        reg.leader,
        broker.broker_epoch,
        "moving",
        0,
        reg.leader_epoch,
        reg.partition_epoch,
        new_isr,
    )
    h.commit(result.records)
    return result.response.error


def test_a_new_replica_is_added_first_and_the_old_one_removed_once_it_is_in_sync() -> None:
    h = moved()
    assert reassign(h, (1, 2, 4)) == ErrorCode.none
    reg = h.image.partition("moving", 0)
    assert reg is not None
    assert (reg.replicas, reg.adding_replicas, reg.removing_replicas) == ((1, 2, 4, 3), (4,), (3,))
    assert reg.isr == (1, 2, 3)  # 3 stays in sync until 4 has caught up
    assert isr_change(h, (1, 2, 4, 3)) == ErrorCode.none  # the leader adds the caught-up 4
    reg = h.image.partition("moving", 0)
    assert reg is not None
    assert (reg.replicas, reg.isr, reg.is_reassigning) == ((1, 2, 4), (1, 2, 4), False)
    assert reg.leader == 1


def test_a_removed_leader_hands_over_at_completion() -> None:
    h = moved()
    reassign(h, (2, 3, 4))
    isr_change(h, (1, 2, 3, 4))
    reg = h.image.partition("moving", 0)
    assert reg is not None
    assert reg.replicas == (2, 3, 4)
    assert reg.leader == 2
    assert reg.leader_epoch == 1


def test_reordering_completes_at_once_and_keeps_the_leader() -> None:
    h = moved()
    assert reassign(h, (3, 1, 2)) == ErrorCode.none
    reg = h.image.partition("moving", 0)
    assert reg is not None
    assert (reg.replicas, reg.leader, reg.is_reassigning) == ((3, 1, 2), 1, False)


def test_a_reassignment_can_be_cancelled() -> None:
    h = moved()
    reassign(h, (1, 2, 4))
    assert reassign(h, None) == ErrorCode.none
    reg = h.image.partition("moving", 0)
    assert reg is not None
    assert (reg.replicas, reg.isr, reg.is_reassigning) == ((1, 2, 3), (1, 2, 3), False)
    assert reassign(h, None) == ErrorCode.no_reassignment_in_progress


@pytest.mark.parametrize("target", [(), (1, 1, 2), (1, 2, 9)])
def test_bad_targets_are_refused(target: tuple[int, ...]) -> None:
    h = moved()
    assert reassign(h, target) == ErrorCode.invalid_replica_assignment
    reg = h.image.partition("moving", 0)
    assert reg is not None and not reg.is_reassigning


def test_a_reassignment_survives_a_snapshot() -> None:
    h = moved()
    reassign(h, (1, 2, 4))
    records = h.image.to_records()
    again = Harness(0)
    again.commit(records)
    assert again.image.partition("moving", 0) == h.image.partition("moving", 0)
