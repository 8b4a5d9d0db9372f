"""A fake ``__transaction_state`` partition and fake partition leaders, for driving the
transaction coordinator without a broker: what it writes, what it reads back."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from kafkalite.coordinator.partition_loads import LogChunk
from kafkalite.coordinator.transaction.coordinator import TransactionConfig, TransactionCoordinator
from kafkalite.coordinator.transaction.markers import MarkerChannelError, TxnMarkerEntry
from kafkalite.coordinator.transaction.state import TransactionState
from kafkalite.coordinator.transaction.transaction_log import decode
from kafkalite.protocol.errors import ErrorCode, KafkaError
from kafkalite.protocol.record_batch import parse_header
from kafkalite.protocol.records import Record, build_batch, decode_records
from kafkalite.supervision import TaskSupervisor
from kafkalite.topic_partition import TopicPartition

S = TransactionState
E = ErrorCode
A, B = ("a", 0), ("b", 0)


class FakeLog:
    """One ``__transaction_state`` partition whose leadership and failures the test sets."""

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.epoch: int | None = 1
        self.fail_with: ErrorCode | None = None
        self.append_after_failure = False  # the write lands although the append failed

    def partition_count(self) -> int:
        return 1

    def leader_epoch(self, partition: int) -> int | None:
        return self.epoch

    def led_partitions(self) -> list[int]:
        return [] if self.epoch is None else [0]

    async def append(self, partition: int, records: list[Record]) -> int:
        await asyncio.sleep(0)
        if self.fail_with is not None:
            if self.append_after_failure:
                self.records.extend(records)
            raise KafkaError(self.fail_with)
        self.records.extend(records)
        return len(self.records) - 1

    def read_chunk(self, partition: int, start: int, max_bytes: int) -> LogChunk:
        """Each record in a batch of its own; ``max_bytes`` counts them (at least one)."""
        end = len(self.records)
        stop = min(end, start + max(1, max_bytes))
        batches = []
        for offset in range(start, stop):
            data = build_batch([self.records[offset]], base_offset=offset)
            batches.append((parse_header(data), decode_records(data)))
        return LogChunk(batches, stop, end)

    def states(self, txn_id: str = "tx") -> list[str]:
        out = []
        for r in self.records:
            key, value = decode(r)
            if key == txn_id and value is not None:
                out.append(value.txn_state.state_name)
        return out


Answer = Callable[[int, TxnMarkerEntry, list[TopicPartition]], ErrorCode | None]


class FakeLeaders:
    """Partition leaders: answers come from ``answer`` (None: unreachable)."""

    def __init__(self) -> None:
        self.leaders: dict[TopicPartition, int | None] = {A: 1, B: 2}
        self.answer: Answer = lambda broker, marker, tps: E.none
        self.written: list[tuple[int, TopicPartition, bool, int]] = []

    def leader_of(self, topic: str, partition: int) -> int | None:
        return self.leaders.get((topic, partition))

    async def write_txn_markers(
        self, broker_id: int, marker: TxnMarkerEntry, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]:
        await asyncio.sleep(0)
        error = self.answer(broker_id, marker, partitions)
        if error is None:
            raise MarkerChannelError(f"broker {broker_id} unreachable")
        if error == E.none:
            self.written.extend(
                (broker_id, tp, marker.committed, marker.producer_epoch) for tp in partitions
            )
        return dict.fromkeys(partitions, error)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000

    def __call__(self) -> int:
        return self.now


SUPERVISOR = TaskSupervisor(lambda task, exc: None)  # it logs; a dead ticker stalls a test


def coordinator(
    log: FakeLog,
    leaders: FakeLeaders,
    clock: Clock | None = None,
    events: list | None = None,
    load_buffer_bytes: int = 1000,
) -> TransactionCoordinator:
    ids = iter(range(100, 200))

    async def next_id() -> int:
        return next(ids)

    def emit(event_type: str, **fields: object) -> None:
        if events is not None:
            events.append((str(event_type), fields))

    return TransactionCoordinator(
        log,
        leaders,
        next_id,
        clock or Clock(),
        emit,
        TransactionConfig(lambda: 900_000, lambda: 1, load_buffer_bytes),
    )


async def until(condition: Callable[[], object], what: str) -> None:
    for _ in range(400):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


async def begin(c: TransactionCoordinator, *partitions: TopicPartition) -> tuple[int, int]:
    result = await c.handle_init_producer_id("tx", 60_000, None)
    assert result.error == E.none
    assert (
        await c.handle_add_partitions(
            "tx", result.producer_id, result.producer_epoch, set(partitions)
        )
        == E.none
    )
    return result.producer_id, result.producer_epoch
