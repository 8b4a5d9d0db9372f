"""What ISR the leader proposes: a follower that died caught up must not be proposed back."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.broker.data_plane.isr_manager import (
    ISR_CHECK_INTERVAL_S,
    isr_check_period_s,
    proposed_isr,
)
from kafkalite.protocol.records import Record, build_batch
from kafkalite.replication.partition import Partition
from kafkalite.storage.config import LogConfig
from kafkalite.storage.log import Log

pytestmark = pytest.mark.unit


def test_only_live_brokers_may_rejoin_the_isr(tmp_path: Path) -> None:
    p = Partition("t", 0, Log.open(tmp_path / "t-0", LogConfig(), lambda: 0), 1)
    p.make_leader(leader_epoch=1, partition_epoch=0, replicas=(1, 2, 3), isr=(1, 2, 3), now_ms=0)
    p.append_records_to_leader(build_batch([Record(None, b"v", 0)]), -1, 1)
    for follower in (2, 3):
        p.update_follower_fetch(follower, 1, now_ms=10)
    # the controller fenced broker 2 (it died) and took it out of the ISR
    p.make_leader(leader_epoch=1, partition_epoch=1, replicas=(1, 2, 3), isr=(1, 3), now_ms=10)
    assert p.followers[2].reached_high_watermark  # what its last fetch showed
    assert proposed_isr(p, 20, 30_000, eligible=lambda b: b != 2) == (1, 3)
    assert proposed_isr(p, 20, 30_000, eligible=lambda b: True) == (1, 2, 3)


def test_with_every_isr_full_the_check_runs_every_half_lag_as_kafkas(tmp_path: Path) -> None:
    """Only a shrink can come then (Kafka's ``isr-expiration`` task runs every lag / 2);
    while a replica is out it may rejoin at any fetch, so the check runs every 100 ms."""
    p = Partition("t", 0, Log.open(tmp_path / "t-0", LogConfig(), lambda: 0), 1)
    p.make_leader(leader_epoch=1, partition_epoch=0, replicas=(1, 2, 3), isr=(1, 2, 3), now_ms=0)
    assert isr_check_period_s([p], set(), lag_max_ms=1000) == 0.5
    assert isr_check_period_s([], set(), lag_max_ms=1000) == 0.5
    assert isr_check_period_s([p], {("t", 0)}, lag_max_ms=1000) == ISR_CHECK_INTERVAL_S
    p.make_leader(leader_epoch=1, partition_epoch=1, replicas=(1, 2, 3), isr=(1, 3), now_ms=10)
    assert isr_check_period_s([p], set(), lag_max_ms=1000) == ISR_CHECK_INTERVAL_S
    assert isr_check_period_s([p], set(), lag_max_ms=30_000) == ISR_CHECK_INTERVAL_S
    p.make_follower(leader=3, leader_epoch=2, partition_epoch=2, replicas=(1, 2, 3), isr=(3,))
    assert isr_check_period_s([p], set(), lag_max_ms=1000) == 0.5  # another leader's ISR


def test_the_hw_waits_for_a_replica_proposed_to_join_the_isr(tmp_path: Path) -> None:
    """The controller may commit an expansion before the leader replays it; from then on
    the joiner may be elected, so a record acknowledged without it could be lost. Kafka's
    leader counts the "maximal" ISR, pending additions included, for its HW (KIP-497,
    ``Partition.maybeIncrementLeaderHW``)."""
    p = Partition("t", 0, Log.open(tmp_path / "t-0", LogConfig(), lambda: 0), 2)
    p.make_leader(leader_epoch=1, partition_epoch=0, replicas=(1, 2, 3), isr=(2, 3), now_ms=0)
    for _ in range(3):
        p.append_records_to_leader(build_batch([Record(None, b"v", 0)]), -1, 1)
    p.update_follower_fetch(3, 3, now_ms=10)
    p.update_follower_fetch(1, 3, now_ms=10)  # broker 1 is back and has caught up
    assert p.high_watermark == 3
    wanted = proposed_isr(p, 20, 30_000, eligible=lambda b: True)
    assert wanted == (1, 2, 3)
    p.pending_isr = wanted  # the IsrManager sends AlterPartition
    p.append_records_to_leader(build_batch([Record(None, b"w", 0)]), -1, 1)
    p.update_follower_fetch(3, 4, now_ms=30)
    assert p.high_watermark == 3  # broker 1 lacks offset 3: not committed yet
    p.update_follower_fetch(1, 4, now_ms=30)
    assert p.high_watermark == 4


def test_a_follower_the_hw_passed_since_its_last_fetch_is_not_proposed(tmp_path: Path) -> None:
    """It reached the HW when it fetched, but the HW moved on before the ISR check: it
    would join without records the ISR already acknowledged."""
    p = Partition("t", 0, Log.open(tmp_path / "t-0", LogConfig(), lambda: 0), 2)
    p.make_leader(leader_epoch=1, partition_epoch=0, replicas=(1, 2, 3), isr=(2, 3), now_ms=0)
    p.append_records_to_leader(build_batch([Record(None, b"v", 0)]), -1, 1)
    p.update_follower_fetch(3, 1, now_ms=10)
    p.update_follower_fetch(1, 1, now_ms=10)
    p.append_records_to_leader(build_batch([Record(None, b"w", 0)]), -1, 1)
    p.update_follower_fetch(3, 2, now_ms=15)
    assert p.high_watermark == 2 and p.followers[1].reached_high_watermark
    assert proposed_isr(p, 20, 30_000, eligible=lambda b: True) == (2, 3)
    p.update_follower_fetch(1, 2, now_ms=25)
    assert proposed_isr(p, 30, 30_000, eligible=lambda b: True) == (1, 2, 3)


def test_a_new_leader_epoch_forgets_the_proposed_isr(tmp_path: Path) -> None:
    p = Partition("t", 0, Log.open(tmp_path / "t-0", LogConfig(), lambda: 0), 2)
    p.make_leader(leader_epoch=1, partition_epoch=0, replicas=(1, 2, 3), isr=(2, 3), now_ms=0)
    p.pending_isr = (1, 2, 3)
    p.make_leader(leader_epoch=1, partition_epoch=1, replicas=(1, 2, 3), isr=(1, 2, 3), now_ms=1)
    assert p.pending_isr == (1, 2, 3)  # its own change replayed: the IsrManager clears it
    p.make_leader(leader_epoch=2, partition_epoch=2, replicas=(1, 2, 3), isr=(2, 3), now_ms=2)
    assert p.pending_isr == ()
    p.pending_isr = (1, 2, 3)
    p.make_follower(leader=3, leader_epoch=3, partition_epoch=3, replicas=(1, 2, 3), isr=(3,))
    assert p.maximal_isr == {3}
