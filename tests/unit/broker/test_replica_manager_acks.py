"""acks=all against a shrinking ISR: the leader's ReplicaManager with real logs on disk."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kafkalite.broker.data_plane.replica_manager import ReplicaManager
from kafkalite.broker.events import EventLog
from kafkalite.metadata.image import MetadataImage, PartitionRegistration
from kafkalite.metadata.records import ConfigRecord, PartitionRecord, TopicRecord
from kafkalite.protocol.errors import ErrorCode
from kafkalite.protocol.records import Record, build_batch
from kafkalite.storage.config import LogConfig
from kafkalite.storage.log_manager import LogManager

pytestmark = pytest.mark.unit


def leader_of_t0(tmp_path: Path, min_isr: str) -> ReplicaManager:
    image = MetadataImage()
    for offset, record in enumerate(
        [
            TopicRecord("t", "id-t"),
            PartitionRecord("id-t", 0, (1, 2, 3), (1, 2, 3), 1, 0, 0),
            ConfigRecord("topic", "t", "min.insync.replicas", min_isr),
        ]
    ):
        image.replay(record, offset)
    manager = ReplicaManager(
        1, LogManager(tmp_path, LogConfig(), lambda: 0), image, EventLog(1, lambda: 0), lambda: 0
    )
    manager.apply_partition("t", 0, image.partition("t", 0))  # type: ignore[arg-type]
    return manager


def shrink_isr_to_leader(manager: ReplicaManager) -> None:
    manager.apply_partition("t", 0, PartitionRegistration((1, 2, 3), (1,), 1, 0, 1))


@pytest.mark.asyncio
async def test_acks_all_after_the_isr_shrank_below_min_insync_replicas(tmp_path: Path) -> None:
    """The write reached every *remaining* in-sync replica, but fewer than asked:
    NOT_ENOUGH_REPLICAS_AFTER_APPEND (a retriable error; the record stays in the log)."""
    manager = leader_of_t0(tmp_path, min_isr="2")
    result = manager.append_to_leader("t", 0, build_batch([Record(None, b"v", 0)]), -1)
    assert result.error == ErrorCode.none
    waiting = asyncio.create_task(manager.wait_for_acks([("t", 0, result)], timeout_s=5))
    for _ in range(10):  # let the waiter run until it parks in the purgatory
        await asyncio.sleep(0)
    assert not waiting.done()  # followers 2 and 3 have not fetched it
    shrink_isr_to_leader(manager)  # the controller took 2 and 3 out of the ISR
    await asyncio.wait_for(waiting, 1)
    assert result.error == ErrorCode.not_enough_replicas_after_append
    assert manager.partitions[("t", 0)].log_end_offset == 1
    manager.close()


@pytest.mark.asyncio
async def test_acks_all_is_acknowledged_once_the_isr_has_it(tmp_path: Path) -> None:
    manager = leader_of_t0(tmp_path, min_isr="1")
    result = manager.append_to_leader("t", 0, build_batch([Record(None, b"v", 0)]), -1)
    waiting = asyncio.create_task(manager.wait_for_acks([("t", 0, result)], timeout_s=5))
    partition = manager.partitions[("t", 0)]
    for follower in (2, 3):
        partition.update_follower_fetch(follower, 1, now_ms=0)
    manager.produce_waiters.notify(("t", 0))
    await asyncio.wait_for(waiting, 1)
    assert result.error == ErrorCode.none
    assert partition.high_watermark == 1
    manager.close()


def lead_again_after_a_leader_change(manager: ReplicaManager) -> None:
    """Broker 2 led for an epoch, then a preferred-leader election gave the partition back
    to broker 1: two committed changes applied back to back, as one metadata batch is."""
    manager.apply_partition("t", 0, PartitionRegistration((1, 2, 3), (1, 2, 3), 2, 1, 1))
    manager.apply_partition("t", 0, PartitionRegistration((1, 2, 3), (1, 2, 3), 1, 2, 2))


@pytest.mark.asyncio
async def test_acks_all_is_not_acknowledged_by_a_later_epoch_of_the_same_leader(
    tmp_path: Path,
) -> None:
    """The batch was appended in epoch 0; broker 2 led epoch 1 (it may not have had the
    batch: this log would have been truncated to broker 2's end), broker 1 leads again in
    epoch 2, and the HW passes the offset. What the HW passed is epoch 2's log, not
    necessarily this batch: NOT_LEADER_OR_FOLLOWER (the client retries; idempotence
    dedupes), never OK. Before, the waiter only looked at who leads now and answered OK."""
    manager = leader_of_t0(tmp_path, min_isr="1")
    result = manager.append_to_leader("t", 0, build_batch([Record(None, b"v", 0)]), -1)
    waiting = asyncio.create_task(manager.wait_for_acks([("t", 0, result)], timeout_s=5))
    for _ in range(10):  # let the waiter park in the purgatory
        await asyncio.sleep(0)
    lead_again_after_a_leader_change(manager)
    partition = manager.partitions[("t", 0)]
    for follower in (2, 3):
        partition.update_follower_fetch(follower, 1, now_ms=0)
    manager.produce_waiters.notify(("t", 0))
    await asyncio.wait_for(waiting, 1)
    assert partition.high_watermark == 1
    assert result.error == ErrorCode.not_leader_or_follower
    manager.close()


@pytest.mark.asyncio
async def test_each_partition_of_a_request_is_judged_on_its_own(tmp_path: Path) -> None:
    """t-0 is acknowledged by its whole ISR while t-1 still waits; then t-0's ISR shrinks
    below min.insync.replicas. t-0's answer was settled when its HW passed the batch: OK.
    Before, the request was re-judged as a whole (``all()``, which also stopped at the
    first partition still waiting), and t-0 came out NOT_ENOUGH_REPLICAS_AFTER_APPEND."""
    manager = leader_of_t0(tmp_path, min_isr="2")
    manager.image.replay(PartitionRecord("id-t", 1, (1, 2, 3), (1, 2, 3), 1, 0, 0), 10)
    manager.apply_partition("t", 1, manager.image.partition("t", 1))  # type: ignore[arg-type]
    pending = [
        ("t", index, manager.append_to_leader("t", index, build_batch([Record(None, b"v", 0)]), -1))
        for index in (0, 1)
    ]
    waiting = asyncio.create_task(manager.wait_for_acks(pending, timeout_s=5))
    for _ in range(10):
        await asyncio.sleep(0)
    t0 = manager.partitions[("t", 0)]
    for follower in (2, 3):
        t0.update_follower_fetch(follower, 1, now_ms=0)
    manager.produce_waiters.notify(("t", 0))
    for _ in range(10):  # the waiter sees t-0 acknowledged
        await asyncio.sleep(0)
    shrink_isr_to_leader(manager)  # t-0's followers leave its ISR
    t1 = manager.partitions[("t", 1)]
    for follower in (2, 3):
        t1.update_follower_fetch(follower, 1, now_ms=0)
    manager.produce_waiters.notify(("t", 1))
    await asyncio.wait_for(waiting, 1)
    assert [r.error for _, _, r in pending] == [ErrorCode.none, ErrorCode.none]
    manager.close()
