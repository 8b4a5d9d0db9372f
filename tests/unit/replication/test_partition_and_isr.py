"""Leader-side replication state: HW from follower fetches, ISR shrink/expand rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.protocol.errors import ErrorCode, KafkaError
from kafkalite.protocol.records import Record, build_batch
from kafkalite.replication.isr import caught_up_replicas, out_of_sync_replicas
from kafkalite.replication.partition import Partition, ReplicaState
from kafkalite.storage.config import LogConfig
from kafkalite.storage.errors import CorruptRecordError
from kafkalite.storage.log import Log

pytestmark = pytest.mark.unit


def leader(tmp_path: Path) -> Partition:
    log = Log.open(tmp_path / "t-0", LogConfig(), lambda: 0)
    partition = Partition("t", 0, log, local_broker_id=1)
    partition.make_leader(
        leader_epoch=3, partition_epoch=0, replicas=(1, 2, 3), isr=(1, 2, 3), now_ms=0
    )
    return partition


def produce(partition: Partition, n: int, acks: int = -1, min_isr: int = 1) -> None:
    for i in range(n):
        partition.append_records_to_leader(build_batch([Record(None, b"%d" % i, 0)]), acks, min_isr)


def test_high_watermark_is_the_min_log_end_offset_over_the_isr(tmp_path: Path) -> None:
    p = leader(tmp_path)
    produce(p, 5)
    assert p.high_watermark == 0  # followers have nothing yet
    assert not p.update_follower_fetch(2, 5, now_ms=10)
    assert p.high_watermark == 0  # broker 3 still has nothing
    assert p.update_follower_fetch(3, 3, now_ms=10)
    assert p.high_watermark == 3
    p.update_follower_fetch(3, 5, now_ms=11)
    assert p.high_watermark == 5
    assert p.followers[3].last_caught_up_time_ms == 11


def test_removing_a_laggard_from_the_isr_lets_the_hw_advance(tmp_path: Path) -> None:
    p = leader(tmp_path)
    produce(p, 4)
    p.update_follower_fetch(2, 4, now_ms=5)
    p.make_leader(3, 1, (1, 2, 3), (1, 2), now_ms=5)  # the controller committed ISR {1, 2}
    assert p.high_watermark == 4


def test_min_insync_replicas_rejects_acks_all_before_append(tmp_path: Path) -> None:
    p = leader(tmp_path)
    p.make_leader(3, 1, (1, 2, 3), (1,), now_ms=5)
    with pytest.raises(KafkaError) as caught:
        produce(p, 1, acks=-1, min_isr=2)
    assert caught.value.code == ErrorCode.not_enough_replicas
    assert p.log_end_offset == 0
    produce(p, 1, acks=1, min_isr=2)  # acks=1 does not care
    assert p.log_end_offset == 1


def test_fetch_from_a_non_replica_and_on_a_follower_is_refused(tmp_path: Path) -> None:
    p = leader(tmp_path)
    with pytest.raises(KafkaError):
        p.update_follower_fetch(9, 0, now_ms=0)
    p.make_follower(leader=2, leader_epoch=4, partition_epoch=1, replicas=(1, 2, 3), isr=(1, 2, 3))
    with pytest.raises(KafkaError) as caught:
        p.update_follower_fetch(3, 0, now_ms=0)
    assert caught.value.code == ErrorCode.not_leader_or_follower


def test_isr_rules() -> None:
    followers = {2: ReplicaState(2, 10, 1_000), 3: ReplicaState(3, 4, 200)}
    assert out_of_sync_replicas(
        (1, 2, 3), followers, now_ms=1_500, replica_lag_time_max_ms=1_000
    ) == [3]
    assert (
        out_of_sync_replicas((1, 2, 3), followers, now_ms=1_100, replica_lag_time_max_ms=1_000)
        == []
    )
    followers[3].reached_high_watermark = True
    assert caught_up_replicas((1, 2), followers, 4, 1_100, 1_000) == [3]
    # the HW moved past what its last fetch showed: it would join without records
    assert caught_up_replicas((1, 2), followers, 5, 1_100, 1_000) == []
    followers[3].reached_high_watermark = False
    assert caught_up_replicas((1, 2), followers, 4, 1_100, 1_000) == []


def test_a_follower_that_would_leave_again_at_once_does_not_rejoin() -> None:
    """A slow follower (every fetch seconds late) was dropped for lagging; its last fetch
    had reached the high watermark. Until a fetch shows it caught up again, adding it
    back would only have it dropped at the next check: the ISR would flap."""
    slow = ReplicaState(3, 60, last_caught_up_time_ms=1_000)
    slow.reached_high_watermark = True
    followers = {2: ReplicaState(2, 60, 2_500), 3: slow}
    assert out_of_sync_replicas((1, 2, 3), followers, 2_500, 1_000) == [3]
    assert caught_up_replicas((1, 2), followers, 60, 2_500, 1_000) == []
    slow.last_caught_up_time_ms = 2_600  # its next fetch arrives, caught up
    assert caught_up_replicas((1, 2), followers, 60, 2_700, 1_000) == [3]


def test_a_follower_under_constant_load_still_counts_as_caught_up(tmp_path: Path) -> None:
    """Producers keep the leader ahead of every fetch; having everything the leader had at
    the previous fetch is what counts (else a healthy follower would leave the ISR)."""
    p = leader(tmp_path)
    produce(p, 5)
    p.update_follower_fetch(2, 3, now_ms=100)  # behind: not caught up yet
    assert p.followers[2].last_caught_up_time_ms == 0
    produce(p, 2)  # the leader moves on before the next fetch
    p.update_follower_fetch(2, 5, now_ms=200)  # has what the leader had at t=100
    assert p.followers[2].last_caught_up_time_ms == 100
    p.update_follower_fetch(2, 7, now_ms=300)  # has everything now
    assert p.followers[2].last_caught_up_time_ms == 300


def test_rejoining_is_judged_against_the_high_watermark_at_fetch_time(tmp_path: Path) -> None:
    p = leader(tmp_path)
    p.make_leader(4, 1, (1, 2, 3), (1, 2), now_ms=0)  # 3 is out; epoch 4 starts at 0
    produce(p, 3)
    p.update_follower_fetch(2, 3, now_ms=10)
    assert p.high_watermark == 3
    p.update_follower_fetch(3, 2, now_ms=10)
    assert caught_up_replicas(p.isr, p.followers, p.high_watermark, 10, 1_000) == []
    p.update_follower_fetch(3, 3, now_ms=20)
    assert caught_up_replicas(p.isr, p.followers, p.high_watermark, 20, 1_000) == [3]


def test_the_low_watermark_is_the_lowest_log_start_of_the_live_replicas(tmp_path: Path) -> None:
    """DeleteRecords is done once every live replica's log start passed the offset."""
    p = leader(tmp_path)
    produce(p, 10)
    for follower in (2, 3):
        p.update_follower_fetch(follower, 10, now_ms=1, log_start_offset=0)
    assert p.log.maybe_increment_log_start_offset(6)
    assert p.low_watermark(lambda broker: True) == 0
    p.update_follower_fetch(2, 10, now_ms=2, log_start_offset=6)
    assert p.low_watermark(lambda broker: True) == 0  # broker 3 still serves 0..5
    assert p.low_watermark(lambda broker: broker != 3) == 6  # a fenced broker holds up nothing


def test_a_follower_follows_its_leaders_log_start_but_never_past_its_hw(tmp_path: Path) -> None:
    log = Log.open(tmp_path / "t-0", LogConfig(), lambda: 0)
    follower = Partition("t", 0, log, local_broker_id=2)
    follower.make_follower(1, 3, 0, (1, 2, 3), (1, 2, 3))
    data = b"".join(
        build_batch([Record(None, b"%d" % i, 0)], base_offset=i, partition_leader_epoch=3)
        for i in range(10)
    )
    follower.append_as_follower(data, leader_high_watermark=4)
    assert follower.follow_log_start_offset(7)
    assert follower.log_start_offset == 4  # what it knows committed
    assert not follower.follow_log_start_offset(2)  # never back
    assert follower.truncate_fully_and_start_at(50) == (4, 10)
    assert (follower.log_start_offset, follower.log_end_offset, follower.high_watermark) == (
        50,
        50,
        50,
    )


def test_an_empty_follower_starts_its_log_at_a_batch_that_straddles_its_leaders_log_start(
    tmp_path: Path,
) -> None:
    """DeleteRecords to the middle of a batch (offset 7 of the batch 5..9): a follower that
    restarts empty is told to start at 7, then sent the whole batch, as every reader is.
    Kafka's ``Partition.appendRecordsToFollowerOrFutureReplica``: the first batch of an
    empty log may begin below its end; the log restarts at the batch's base offset. Before,
    the follower refused the batch forever and never rejoined the ISR."""
    leader_log = Log.open(tmp_path / "leader" / "t-0", LogConfig(), lambda: 0)
    for base, count in ((0, 5), (5, 5)):
        leader_log.append_as_leader(
            build_batch([Record(None, b"%d" % (base + i), 0) for i in range(count)]), 3
        )
    assert leader_log.maybe_increment_log_start_offset(7)
    sent = leader_log.read(7, 1 << 20, 10).records

    log = Log.open(tmp_path / "follower" / "t-0", LogConfig(), lambda: 0)
    follower = Partition("t", 0, log, local_broker_id=2)
    follower.make_follower(1, 3, 0, (1, 2, 3), (1, 3))
    follower.truncate_fully_and_start_at(7)  # its fetch from 0 was OFFSET_OUT_OF_RANGE

    follower.append_as_follower(sent, leader_high_watermark=10)
    follower.follow_log_start_offset(7)
    assert (follower.log_start_offset, follower.log_end_offset, follower.high_watermark) == (
        7,
        10,
        10,
    )
    assert log.read(7, 1 << 20, 10).records == sent  # it serves what its leader serves


def test_a_follower_that_is_not_empty_still_refuses_a_batch_below_its_end(tmp_path: Path) -> None:
    """Only an empty log may restart lower: a follower holding records refuses a batch that
    overlaps them (its fetcher asked from its end; an overlap means something is wrong)."""
    log = Log.open(tmp_path / "t-0", LogConfig(), lambda: 0)
    follower = Partition("t", 0, log, local_broker_id=2)
    follower.make_follower(1, 3, 0, (1, 2, 3), (1, 3))
    first = build_batch([Record(None, b"%d" % i, 0) for i in range(5)], partition_leader_epoch=3)
    follower.append_as_follower(first, leader_high_watermark=5)
    with pytest.raises(CorruptRecordError):
        follower.append_as_follower(first, leader_high_watermark=5)
    assert follower.log_end_offset == 5
