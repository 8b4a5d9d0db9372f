"""The controller's half of replication, as pure operations: fencing, unfencing,
re-registration, controlled shutdown, ISR changes and elections."""

from __future__ import annotations

import pytest

from kafkalite.controller.partition_changes import (
    choose_leader,
    elect_if_offline,
    preferred_leader,
    without_broker,
)
from kafkalite.controller.replication_control import PREFERRED_ELECTION, UNCLEAN_ELECTION
from kafkalite.controller.topic_control import CreatableTopic
from kafkalite.metadata.image import PartitionRegistration
from kafkalite.metadata.records import (
    NO_LEADER,
    RECOVERING,
    FenceBrokerRecord,
    UnfenceBrokerRecord,
)
from kafkalite.protocol.errors import ErrorCode
from tests.unit.controller.test_quorum_controller import Harness

pytestmark = pytest.mark.unit


def registration(
    replicas: tuple[int, ...], isr: tuple[int, ...], leader: int
) -> PartitionRegistration:
    return PartitionRegistration(replicas, isr, leader, 5, 7)


# ---- partition_changes: the election rules --------------------------------------------------


def test_the_first_live_isr_member_in_replica_order_leads() -> None:
    p = registration((3, 1, 2), (1, 2), NO_LEADER)
    assert choose_leader(p, live={1, 2, 3}, unclean=False) == (1, False)
    assert choose_leader(p, live={2, 3}, unclean=False) == (2, False)
    assert choose_leader(p, live={3}, unclean=False) == (NO_LEADER, False)
    assert choose_leader(p, live={3}, unclean=True) == (3, True)


def test_a_fenced_leader_hands_over_to_the_isr_and_leaves_it() -> None:
    change = without_broker(registration((1, 2, 3), (1, 2, 3), 1), 1, {2, 3}, unclean=False)
    assert (change.leader, change.isr) == (2, (2, 3))


def test_a_fenced_follower_leaves_the_isr_only() -> None:
    change = without_broker(registration((1, 2, 3), (1, 2, 3), 1), 3, {1, 2}, unclean=False)
    assert (change.leader, change.isr) == (None, (1, 2))


def test_the_last_isr_member_stays_and_the_partition_goes_offline() -> None:
    change = without_broker(registration((1, 2), (1,), 1), 1, {2}, unclean=False)
    assert (change.leader, change.isr) == (NO_LEADER, None)  # ISR stays (1,)


def test_unclean_election_takes_any_live_replica_as_sole_isr() -> None:
    change = without_broker(registration((1, 2), (1,), 1), 1, {2}, unclean=True)
    assert (change.leader, change.isr, change.unclean) == (2, (2,), True)


def test_an_offline_partition_comes_back_with_its_last_isr_member() -> None:
    offline = registration((1, 2), (1,), NO_LEADER)
    assert elect_if_offline(offline, {2}, unclean=False).is_empty
    assert elect_if_offline(offline, {1, 2}, unclean=False).leader == 1
    assert elect_if_offline(registration((1, 2), (1,), 2), {1}, unclean=False).is_empty


def test_preferred_leader_only_when_in_sync_and_alive() -> None:
    assert preferred_leader(registration((1, 2), (1, 2), 2), {1, 2}).leader == 1
    assert preferred_leader(registration((1, 2), (2,), 2), {1, 2}).is_empty
    assert preferred_leader(registration((1, 2), (1, 2), 2), {2}).is_empty
    assert preferred_leader(registration((1, 2), (1, 2), 1), {1, 2}).is_empty


# ---- the controller's operations ---------------------------------------------------------


def topic(h: Harness, rf: int = 3, **configs: str) -> str:
    result = h.controller.create_topics(
        [CreatableTopic("t", 1, rf, configs=dict(configs))]  # type: ignore[arg-type]
    )
    h.commit(result.records)
    return "t"


def test_fencing_a_leader_elects_another_with_a_new_epoch() -> None:
    h = Harness(3)
    topic(h)
    before = h.image.partition("t", 0)
    assert before is not None
    result = h.controller.fence_broker(before.leader)
    assert isinstance(result.records[0], FenceBrokerRecord)
    h.commit(result.records)
    after = h.image.partition("t", 0)
    assert after is not None
    assert after.leader not in (before.leader, NO_LEADER)
    assert after.leader_epoch == before.leader_epoch + 1
    assert before.leader not in after.isr
    assert after.partition_epoch > before.partition_epoch


def test_heartbeats_unfence_a_caught_up_broker_and_reject_stale_epochs() -> None:
    h = Harness(3)
    h.commit(h.controller.fence_broker(2).records)
    epoch = h.image.brokers[2].broker_epoch
    assert h.controller.heartbeat(2, epoch + 99, 100, False, False).response.error == (
        ErrorCode.stale_broker_epoch
    )
    behind = h.controller.heartbeat(2, epoch, epoch - 1, False, False)
    assert behind.records == [] and behind.response.is_fenced
    caught_up = h.controller.heartbeat(2, epoch, epoch, False, False)
    assert isinstance(caught_up.records[0], UnfenceBrokerRecord)
    assert not caught_up.response.is_fenced


def test_controlled_shutdown_moves_leadership_before_the_broker_stops() -> None:
    h = Harness(3)
    topic(h)
    leader = h.image.partition("t", 0).leader  # type: ignore[union-attr]
    epoch = h.image.brokers[leader].broker_epoch
    result = h.controller.heartbeat(leader, epoch, epoch, False, want_shut_down=True)
    assert result.response.should_shut_down
    h.commit(result.records)
    after = h.image.partition("t", 0)
    assert after is not None and after.leader != leader and leader not in after.isr
    assert h.image.brokers[leader].fenced


def test_a_restarted_broker_gives_up_what_it_led_until_elected_again() -> None:
    h = Harness(3)
    topic(h)
    leader = h.image.partition("t", 0).leader  # type: ignore[union-attr]
    result = h.controller.register_broker(leader, "h", 1, None, "new-incarnation", h.offset)
    h.commit(result.records)
    after = h.image.partition("t", 0)
    assert after is not None and after.leader != leader and leader not in after.isr


def test_alter_partition_rejects_stale_and_ineligible_changes() -> None:
    h = Harness(3)
    topic(h)
    p = h.image.partition("t", 0)
    assert p is not None
    epoch = h.image.brokers[p.leader].broker_epoch
    others = [r for r in p.replicas if r != p.leader]

    def alter(leader_epoch: int, partition_epoch: int, isr: tuple[int, ...]) -> ErrorCode:
        return h.controller.alter_partition(
            p.leader, epoch, "t", 0, leader_epoch, partition_epoch, isr
        ).response.error

    assert (
        alter(p.leader_epoch - 1, p.partition_epoch, (p.leader,)) == ErrorCode.fenced_leader_epoch
    )
    assert alter(p.leader_epoch, p.partition_epoch - 1, (p.leader,)) == (
        ErrorCode.invalid_update_version
    )
    assert alter(p.leader_epoch, p.partition_epoch, (others[0],)) == ErrorCode.ineligible_replica
    shrink = h.controller.alter_partition(
        p.leader, epoch, "t", 0, p.leader_epoch, p.partition_epoch, (p.leader, others[0])
    )
    assert shrink.response.error == ErrorCode.none
    h.commit(shrink.records)
    assert h.image.partition("t", 0).isr == tuple(  # type: ignore[union-attr]
        r for r in p.replicas if r in (p.leader, others[0])
    )
    h.commit(h.controller.fence_broker(others[1]).records)
    rejoin = h.controller.alter_partition(
        p.leader, epoch, "t", 0, p.leader_epoch, p.partition_epoch + 1, p.replicas
    )
    assert rejoin.response.error == ErrorCode.ineligible_replica  # a fenced broker cannot


def test_preferred_and_unclean_elections() -> None:
    h = Harness(3)
    topic(h, rf=2)
    p = h.image.partition("t", 0)
    assert p is not None
    preferred, other = p.replicas
    h.commit(h.controller.fence_broker(preferred).records)
    h.commit(
        h.controller.heartbeat(
            preferred, h.image.brokers[preferred].broker_epoch, 10**6, False, False
        ).records
    )
    assert h.image.partition("t", 0).leader == other  # type: ignore[union-attr]
    not_yet = h.controller.elect_leaders(PREFERRED_ELECTION, [("t", 0)])
    assert not_yet.response[0][2].error == ErrorCode.preferred_leader_not_available  # not in ISR
    # the leader alone in the ISR dies: clean election cannot help, unclean can
    h.commit(h.controller.fence_broker(other).records)
    assert h.image.partition("t", 0).leader == NO_LEADER  # type: ignore[union-attr]
    unclean = h.controller.elect_leaders(UNCLEAN_ELECTION, [("t", 0)])
    assert unclean.response[0][2].error == ErrorCode.none
    assert unclean.records[0].leader_recovery_state == RECOVERING  # type: ignore[union-attr]
    h.commit(unclean.records)
    after = h.image.partition("t", 0)
    assert after is not None and after.leader == preferred and after.isr == (preferred,)
