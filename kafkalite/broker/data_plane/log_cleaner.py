"""The broker's log cleaner: compacts the dirtiest compacted log this broker hosts.

Kafka's ``LogCleaner`` threads, as one task on the broker's event loop: it picks, among the
replicas here (leaders and followers alike: each replica cleans its own copy) whose
``cleanup.policy`` includes ``compact``, the one with the highest dirty ratio that needs
cleaning (``storage.cleaner``), runs one pass over it step by step, letting requests be
served between steps, and reports what the pass removed as a ``log_cleaned`` event. With
nothing to clean it sleeps ``log.cleaner.backoff.ms``. ``log.cleaner.enable=false`` stops
it. Internal topics (``__consumer_offsets``, ``__transaction_state``) are compacted, so
their logs shrink and a coordinator's reload reads less.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from kafkalite.broker.data_plane.replica_manager import ReplicaManager
from kafkalite.broker.events import EventLog
from kafkalite.events import EventType
from kafkalite.metadata.image import MetadataImage
from kafkalite.replication.partition import Partition
from kafkalite.storage.cleaner import CleanerStats, LogToClean, clean, log_to_clean, needs_cleaning
from kafkalite.ticks import sleep_until_tick
from kafkalite.topic_partition import TopicPartition


class LogCleanerManager:
    """Owned by the broker's event loop; its one task is started by the broker."""

    def __init__(
        self,
        replica_manager: ReplicaManager,
        image: MetadataImage,
        events: EventLog,
        now_ms: Callable[[], int],
    ) -> None:
        self.replica_manager = replica_manager
        self.image = image
        self.events = events
        self.now_ms = now_ms

    async def run(self) -> None:
        while True:
            cleaned = False
            if self.image.broker_bool("log.cleaner.enable"):
                cleaned = await self.clean_dirtiest()
            if not cleaned:  # nothing to clean: look again on the shared grid of checks
                await sleep_until_tick(self.image.broker_int("log.cleaner.backoff.ms") / 1000)

    def dirtiest(self) -> tuple[TopicPartition, Partition, LogToClean] | None:
        """The hosted log most in need of cleaning, if any needs it."""
        now = self.now_ms()
        found: list[tuple[TopicPartition, Partition, LogToClean]] = []
        for key, partition in self.replica_manager.partitions.items():
            to_clean = log_to_clean(partition.log, partition.last_stable_offset, now)
            if to_clean is not None and needs_cleaning(partition.log, to_clean, now):
                found.append((key, partition, to_clean))
        return max(found, key=lambda f: f[2].dirty_ratio, default=None)

    async def clean_dirtiest(self) -> bool:
        """One pass over the dirtiest log; False when no log needed cleaning."""
        chosen = self.dirtiest()
        if chosen is None:
            return False
        (topic, index), partition, to_clean = chosen
        stats = CleanerStats(to_clean.first_dirty_offset)
        steps = clean(partition.log, to_clean, self.now_ms(), stats)
        for _ in steps:
            await asyncio.sleep(0)  # serve requests between steps
            if self.replica_manager.partitions.get((topic, index)) is not partition:
                steps.close()  # deleted or moved away meanwhile: its log is gone
                return True
        if stats.completed:
            self.events.emit(
                EventType.LOG_CLEANED,
                topic=topic,
                partition=index,
                cleaned_up_to=stats.end_offset,
                dirty_ratio=round(to_clean.dirty_ratio, 3),
                records_removed=stats.records_removed,
                tombstones_removed=stats.tombstones_removed,
                aborted_records_removed=stats.aborted_records_removed,
                markers_removed=stats.markers_removed,
                bytes_before=stats.bytes_before,
                bytes_after=stats.bytes_after,
            )
        return True
