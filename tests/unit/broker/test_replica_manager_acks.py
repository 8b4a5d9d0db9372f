"""acks=all against a shrinking ISR: the leader's ReplicaManager with real logs on disk."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kafkalite.broker.events import EventLog
from kafkalite.broker.replica_manager import ReplicaManager
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
