"""The controller's half of replication, as pure operations: fencing, unfencing,
re-registration, controlled shutdown, ISR changes and elections."""

from __future__ import annotations

import pytest

from kafkalite.controller.heartbeats import BrokerHeartbeats, Contact
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


# ---- heartbeats --------------------------------------------------------------------------


def test_silent_brokers_expire_and_a_new_controller_gives_a_full_session() -> None:
    beats = BrokerHeartbeats(session_timeout_ms=800, intervals_ms={Contact.HEARTBEAT: 400})
    beats.reset([1, 2, 3], now_ms=0, gone=[1, 2, 3])
    beats.touch(1, 500)
    assert beats.expired([1, 2, 3], now_ms=900) == [2, 3]
    assert beats.expired([1], now_ms=1_200) == []
    beats.reset([1, 2, 3], now_ms=2_000, gone=[1, 2, 3])
    assert beats.expired([1, 2, 3], now_ms=2_500) == []


def test_a_new_controller_waits_two_sessions_for_a_first_contact_but_one_for_the_gone() -> None:
    """Taken over at 0: broker 2 was found gone (its connection refused) and is fenced
    after one session; 3, the deposed controller, too slow to keep its seat, makes its
    first contact at 1.5 s, and is judged by one session from then on; 1 never does."""
    beats = BrokerHeartbeats(session_timeout_ms=800, intervals_ms={Contact.HEARTBEAT: 400})
    beats.reset([1, 2, 3], now_ms=0, gone=[2])
    assert beats.expired([1, 2, 3], now_ms=801) == [2]
    beats.touch(3, 1_500)
    assert beats.expired([1, 3], now_ms=1_600) == []
    assert beats.expired([1, 3], now_ms=1_601) == [1]
    assert beats.expired([3], now_ms=2_301) == [3]


def test_the_controller_never_fences_its_own_broker() -> None:
    """A lone broker is its own controller: if the controller runs, its broker does."""
    beats = BrokerHeartbeats(session_timeout_ms=800, intervals_ms={Contact.HEARTBEAT: 400})
    beats.reset([1, 2], now_ms=0)
    assert beats.expired([1, 2], now_ms=5_000, own_id=1) == [2]


def test_a_stalled_controller_counts_its_stall_against_no_broker() -> None:
    """The controller's loop ran 2 s late: heartbeats sent meanwhile were never read."""
    beats = BrokerHeartbeats(session_timeout_ms=800, intervals_ms={Contact.HEARTBEAT: 400})
    beats.reset([1, 2], now_ms=0, gone=[1, 2])
    beats.touch(2, 300)
    beats.forgive(2_000, now_ms=2_500)
    assert beats.expired([1, 2], now_ms=2_500) == []
    assert beats.expired([1, 2], now_ms=3_050) == [1]  # 1 was silent before the stall too
    assert beats.expired([1, 2], now_ms=3_200) == [1, 2]
    beats.forgive(10_000, now_ms=3_100)  # never beyond now: silence after it still counts
    assert beats.expired([1, 2], now_ms=3_901) == [1, 2]


def heartbeating(beats: BrokerHeartbeats, broker_id: int, every_ms: int, until_ms: int) -> None:
    for t in range(every_ms, until_ms + 1, every_ms):
        beats.touch(broker_id, t)


def test_on_a_quiet_machine_silence_is_judged_by_the_session_timeout() -> None:
    """Contacts that come within the heartbeat interval stretch nothing, however close the
    interval is to the session timeout (400 of 800 ms here)."""
    beats = BrokerHeartbeats(session_timeout_ms=800, intervals_ms={Contact.HEARTBEAT: 400})
    beats.reset([1, 2], now_ms=0)
    heartbeating(beats, 1, 400, 3_000)
    heartbeating(beats, 2, 400, 1_500)
    assert beats.effective_timeout_ms(3_000) == 800
    assert beats.expired([1, 2], now_ms=2_001) == [2]


def test_late_heartbeats_stretch_the_session_for_a_while() -> None:
    """A machine so busy that a live broker's heartbeats came 700 ms apart, 300 ms late:
    the session grows by three times that, and a silence of 1.6 s is not yet death, until
    a minute of punctual heartbeats has passed."""
    beats = BrokerHeartbeats(session_timeout_ms=800, intervals_ms={Contact.HEARTBEAT: 400})
    beats.reset([1, 2], now_ms=0)
    beats.touch(1, 100)
    beats.touch(1, 800)  # 700 ms after the last one
    beats.touch(2, 100)
    assert beats.effective_timeout_ms(800) == 800 + 3 * 300
    assert beats.expired([1, 2], now_ms=1_800) == []
    assert beats.expired([1, 2], now_ms=1_801) == [2]
    heartbeating(beats, 1, 400, 62_000)
    assert beats.effective_timeout_ms(62_000) == 800
    beats.touch(1, 70_000)  # far beyond its session: fenced meanwhile, not slow
    assert beats.effective_timeout_ms(70_000) == 800


def test_each_kind_of_contact_is_timed_against_its_own_interval() -> None:
    """Heartbeats 700 ms apart, 300 ms late, with a quorum Fetch between them: the machine
    is busy, though a contact of one kind or the other came every 350 ms. Timed together
    they showed no lateness, and the next long silence of a live broker fenced it."""
    beats = BrokerHeartbeats(800, {Contact.HEARTBEAT: 400, Contact.QUORUM_FETCH: 500})
    beats.reset([1], now_ms=0)
    beats.touch(1, 100)
    beats.touch(1, 450, kind=Contact.QUORUM_FETCH)
    beats.touch(1, 800)
    assert beats.effective_timeout_ms(800) == 800 + 3 * 300
    beats.touch(1, 1_000, kind=Contact.QUORUM_FETCH)  # 550 ms after the last Fetch
    assert beats.effective_timeout_ms(1_000) == 800 + 3 * 300
    beats.touch(1, 5_000, kind=Contact.QUORUM_VOTE)  # proof of life, with no period
    assert beats.expired([1], now_ms=5_000) == []


def test_a_lagging_controller_stretches_the_session_before_any_contact_comes_late() -> None:
    """The controller's own loop ran 200 ms late: the machine is starved, and the brokers'
    next silence may be the first late contact of all."""
    beats = BrokerHeartbeats(800, {Contact.HEARTBEAT: 400})
    beats.reset([1, 2], now_ms=0)
    heartbeating(beats, 1, 400, 1_200)
    beats.controller_lag_ms = 200
    assert beats.effective_timeout_ms(1_200) == 800 + 3 * 200
    assert beats.expired([1], now_ms=2_500) == []
    beats.controller_lag_ms = 0
    assert beats.expired([1], now_ms=2_500) == [1]


def test_a_crowded_machine_stretches_the_session_before_any_contact_comes_late() -> None:
    """Twelve tasks running or waiting for each two CPUs (a class starting its notebooks
    at once): each gets a sixth of a CPU, and the first silence of a starved broker comes
    before any late contact. Up to two per CPU the session is the configured one."""
    beats = BrokerHeartbeats(800, {Contact.HEARTBEAT: 400})
    beats.reset([1], now_ms=0)
    heartbeating(beats, 1, 400, 1_200)
    beats.run_queue_per_cpu = 2.0
    assert beats.effective_timeout_ms(1_200) == 800
    beats.run_queue_per_cpu = 6.0
    assert beats.effective_timeout_ms(1_200) == 800 * 3
    assert beats.expired([1], now_ms=1_200 + 1_300) == []  # the silence that fenced one
    assert beats.expired([1], now_ms=1_200 + 2_401) == [1]
    beats.run_queue_per_cpu = 40.0
    assert beats.effective_timeout_ms(1_200) == 9_000


def test_the_longest_silence_a_live_broker_ended_is_kept_for_a_minute() -> None:
    """How close a live broker came to being fenced; a broker that returns after its
    session ran out was fenced, and its silence is no margin."""
    beats = BrokerHeartbeats(800, {Contact.HEARTBEAT: 400})
    beats.reset([1, 2], now_ms=0)
    beats.run_queue_per_cpu = 6.0  # a session of 2.4 s
    heartbeating(beats, 1, 400, 1_200)
    beats.touch(1, 2_400)  # 1.2 s of silence
    beats.touch(2, 9_000)  # back long after its (two) sessions ran out
    assert beats.longest_silence_ms(9_000) == 1_200
    for t in range(2_800, 63_201, 400):
        beats.touch(1, t)
    assert beats.longest_silence_ms(63_200) == 400


def test_the_stretch_has_kafkas_default_as_its_limit() -> None:
    beats = BrokerHeartbeats(session_timeout_ms=800, intervals_ms={Contact.HEARTBEAT: 400})
    beats.reset([1], now_ms=0)
    gap = 700
    t = 0
    for _ in range(6):  # each gap within the stretched session of the one before
        t += gap
        beats.touch(1, t)
        gap = beats.effective_timeout_ms(t) - 1
    assert beats.effective_timeout_ms(t) == 9_000


def test_a_restart_or_a_new_controller_is_no_gap() -> None:
    beats = BrokerHeartbeats(session_timeout_ms=800, intervals_ms={Contact.HEARTBEAT: 400})
    beats.reset([1, 2], now_ms=0)
    beats.touch(1, 600)  # first heartbeat to this controller: 600 ms after it took over
    beats.touch(2, 100)
    beats.registered(2, 700)  # restarted within its session
    beats.touch(2, 850)
    assert beats.effective_timeout_ms(850) == 800
    beats.touch(2, 1_400)  # 550 ms: a real gap, 150 ms late
    assert beats.effective_timeout_ms(1_400) == 800 + 3 * 150


def test_the_fence_check_wakes_when_the_first_session_runs_out() -> None:
    beats = BrokerHeartbeats(session_timeout_ms=800, intervals_ms={Contact.HEARTBEAT: 400})
    beats.reset([1, 2], now_ms=0)
    beats.touch(1, 400)
    assert beats.next_expiry_ms([1, 2], now_ms=500) == 1_200
    beats.touch(2, 450)
    assert beats.next_expiry_ms([1, 2], now_ms=500) == 1_200
    assert beats.next_expiry_ms([1], now_ms=500) == 1_200
    assert beats.next_expiry_ms([], now_ms=500) == 1_300


def test_the_controllers_own_broker_sets_no_wake_up() -> None:
    """Its heartbeats may come less often than a session (its quorum Fetches go to no one);
    an expiry it can never reach would wake the fence check again and again."""
    beats = BrokerHeartbeats(session_timeout_ms=800, intervals_ms={Contact.HEARTBEAT: 500})
    beats.reset([1, 2], now_ms=0)
    beats.touch(1, 0)
    beats.touch(2, 2_000)
    assert beats.next_expiry_ms([1, 2], now_ms=2_000) == 800  # broker 1 is overdue
    assert beats.next_expiry_ms([1, 2], now_ms=2_000, own_id=1) == 2_800
    assert beats.expired([1, 2], now_ms=2_000, own_id=1) == []


def test_heartbeats_tell_which_live_brokers_have_not_replayed_an_offset() -> None:
    beats = BrokerHeartbeats(session_timeout_ms=800, intervals_ms={Contact.HEARTBEAT: 400})
    beats.reset([1, 2, 3], now_ms=0)
    beats.touch(1, 10, replayed_offset=42)
    beats.touch(2, 10, replayed_offset=40)
    assert beats.behind([1, 2, 3], 41) == [2, 3]
    assert beats.behind([1, 2], 40) == []
    beats.reset([1, 2, 3], now_ms=20)  # a new controller has heard nothing yet
    assert beats.behind([1], 0) == [1]


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
