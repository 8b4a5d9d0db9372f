"""A stand-in for the broker's ``__consumer_offsets``: one partition the test controls.

It keeps real record batches (built by ``build_batch``), so a transactional commit and a
control marker look to the coordinator exactly as they would in a broker's log.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterable

from kio.schema.consumer_protocol_subscription.v0.data import ConsumerProtocolSubscription
from kio.serial import entity_writer

from kafkalite.coordinator.group.consumer_group import TopicMetadata
from kafkalite.coordinator.group.consumer_group_config import ConsumerGroupConfig
from kafkalite.coordinator.group.coordinator import GroupCoordinator
from kafkalite.coordinator.group.group_migration import MigrationPolicy
from kafkalite.coordinator.partition_loads import LogChunk
from kafkalite.protocol.record_batch import RecordBatchHeader, parse_header
from kafkalite.protocol.records import Record, build_batch, decode_records


class FakeOffsetsTopic:
    """One offsets partition whose log and leadership the test controls."""

    def __init__(self) -> None:
        self.batches: list[tuple[RecordBatchHeader, list[Record]]] = []
        self.epoch: int | None = 0

    @property
    def records(self) -> list[Record]:
        """The data records written so far (markers left out)."""
        return [r for h, rs in self.batches if not h.is_control for r in rs]

    @property
    def log_end_offset(self) -> int:
        return self.batches[-1][0].next_offset if self.batches else 0

    def partition_count(self) -> int:
        return 1

    def leader_epoch(self, partition: int) -> int | None:
        return self.epoch

    async def append(
        self, partition: int, records: list[Record], producer_id: int = -1, producer_epoch: int = -1
    ) -> int:
        return self.write(records, producer_id, producer_epoch)

    def write(
        self,
        records: list[Record],
        producer_id: int = -1,
        producer_epoch: int = -1,
        control: bool = False,
    ) -> int:
        """Append one batch as the broker would (a transactional one with a producer id)."""
        base = self.log_end_offset
        data = build_batch(
            records,
            base_offset=base,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            transactional=producer_id >= 0,
            control=control,
        )
        self.batches.append((parse_header(data), decode_records(data)))
        return base

    def read_chunk(self, partition: int, start: int, max_bytes: int) -> LogChunk:
        """Here ``max_bytes`` counts batches (at least one)."""
        batches = [b for b in self.batches if b[0].base_offset >= start][: max(1, max_bytes)]
        end = self.log_end_offset
        return LogChunk(batches, batches[-1][0].next_offset if batches else end, end)


class FakeTopics:
    """The topics a consumer group's members may subscribe to: name -> partition count,
    each with the id ``id-<name>``; the test adds topics as it goes."""

    def __init__(self, **partitions: int) -> None:
        self.topics = {name: TopicMetadata(f"id-{name}", name, n) for name, n in partitions.items()}

    def add(self, name: str, partitions: int) -> None:
        self.topics[name] = TopicMetadata(f"id-{name}", name, partitions)

    def topic_names(self) -> Iterable[str]:
        return list(self.topics)

    def describe(self, name: str) -> TopicMetadata | None:
        return self.topics.get(name)

    def topic_name(self, topic_id: str) -> str | None:
        return next((t.name for t in self.topics.values() if t.topic_id == topic_id), None)


def consumer_config(
    session_ms: int = 10_000,
    interval_ms: int = 1_000,
    migration: MigrationPolicy = MigrationPolicy.BIDIRECTIONAL,
) -> ConsumerGroupConfig:
    return ConsumerGroupConfig(
        session_timeout_ms=lambda group_id: session_ms,
        heartbeat_interval_ms=lambda group_id: interval_ms,
        assignors=lambda: ["uniform", "range"],
        max_size=lambda: 100,
        migration_policy=lambda: migration,
    )


class Clock:
    """Milliseconds the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


def subscription(*topics: str) -> bytes:
    """A consumer's JoinGroup metadata as kafka-python writes it (v0: no owned partitions),
    written by kio (not by the code under test)."""
    out = io.BytesIO()
    out.write(struct.pack(">h", 0))
    entity_writer(ConsumerProtocolSubscription)(
        out, ConsumerProtocolSubscription(topics=topics, user_data=None)
    )
    return out.getvalue()


def consumer_coordinator(
    topic: FakeOffsetsTopic, clock: Clock, config: ConsumerGroupConfig
) -> GroupCoordinator:
    """A group coordinator over ``topic``, with topic A (4 partitions) to subscribe to."""
    return GroupCoordinator(
        topic,
        clock,
        lambda *a, **k: None,
        lambda: 0,
        lambda: 60_000,
        lambda: 0,
        topics=FakeTopics(A=4),
        consumer_config=config,
    )
