"""The transaction coordinator with its log and its partition leaders faked: what it
writes, in which order, and how it finishes decided transactions after a failover."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from kafkalite.coordinator.transaction.coordinator import TransactionConfig, TransactionCoordinator
from kafkalite.coordinator.transaction.markers import (
    MarkerChannelError,
    MarkerOutcome,
    TxnMarkerEntry,
    write_markers,
)
from kafkalite.coordinator.transaction.operations import ProducerIdAndEpoch
from kafkalite.coordinator.transaction.state import TransactionState
from kafkalite.coordinator.transaction.transaction_log import decode
from kafkalite.protocol.errors import ErrorCode, KafkaError
from kafkalite.protocol.records import Record
from kafkalite.supervision import TaskSupervisor
from kafkalite.topic_partition import TopicPartition

pytestmark = [pytest.mark.unit, pytest.mark.asyncio]
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

    def read_all(self, partition: int) -> list[Record]:
        return list(self.records)

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
    log: FakeLog, leaders: FakeLeaders, clock: Clock | None = None, events: list | None = None
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
        TransactionConfig(lambda: 900_000, lambda: 1),
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


async def test_a_commit_is_written_before_its_markers_and_completed_after_them() -> None:
    log, leaders, events = FakeLog(), FakeLeaders(), []
    c = coordinator(log, leaders, events=events)
    pid, epoch = await begin(c, A, B)
    assert await c.handle_end_transaction("tx", pid, epoch, commit=True) == E.none
    assert log.states()[-1] == "PrepareCommit"  # decided before any marker
    await until(lambda: log.states()[-1] == "CompleteCommit", "CompleteCommit")
    assert log.states() == ["Empty", "Ongoing", "PrepareCommit", "CompleteCommit"]
    assert sorted(leaders.written) == [(1, A, True, epoch), (2, B, True, epoch)]
    assert [t for t, _ in events] == [
        "txn_partition_loaded",
        "txn_started",
        "txn_prepare_commit",
        "markers_written",
        "txn_committed",
    ]
    await c.stop()


async def test_markers_are_retried_until_every_leader_has_written_them() -> None:
    leaders = FakeLeaders()
    leaders.leaders[A] = -1  # no leader at the moment
    attempts: list[int] = []

    def answer(broker: int, marker: TxnMarkerEntry, tps: list[TopicPartition]) -> ErrorCode | None:
        attempts.append(broker)
        if len(attempts) == 3:
            leaders.leaders[A] = 3  # an election happened
        if broker == 2 and attempts.count(2) < 3:
            return None if attempts.count(2) == 1 else E.not_enough_replicas
        return E.none

    leaders.answer = answer
    marker = TxnMarkerEntry(7, 0, 1, True, frozenset({A, B, ("deleted", 0)}))
    outcome = await write_markers(leaders, marker, lambda: True, backoff_s=0.001)
    assert outcome == MarkerOutcome.WRITTEN
    assert sorted((b, tp) for b, tp, _, _ in leaders.written) == [(2, B), (3, A)]


async def test_a_newer_coordinator_stops_the_markers_of_an_older_one() -> None:
    leaders = FakeLeaders()
    leaders.answer = lambda broker, marker, tps: E.transaction_coordinator_fenced
    marker = TxnMarkerEntry(7, 0, 1, True, frozenset({A}))
    assert await write_markers(leaders, marker, lambda: True) == MarkerOutcome.SUPERSEDED
    assert await write_markers(leaders, marker, lambda: False) == MarkerOutcome.SUPERSEDED


async def test_a_new_coordinator_finishes_a_decided_transaction_without_being_asked() -> None:
    """The old coordinator wrote PrepareCommit and died before any marker: whoever leads
    the partition next loads it and writes the markers, with no client involved."""
    log, leaders = FakeLog(), FakeLeaders()
    leaders.answer = lambda broker, marker, tps: None  # the old coordinator reaches nobody
    old = coordinator(log, leaders)
    pid, epoch = await begin(old, A, B)
    assert await old.handle_end_transaction("tx", pid, epoch, commit=True) == E.none
    await old.stop()  # killed
    assert leaders.written == []
    leaders.answer = lambda broker, marker, tps: E.none
    log.epoch = 2  # the partition's new leader
    new = coordinator(log, leaders)
    new.start(SUPERVISOR.spawn)
    await until(lambda: log.states()[-1] == "CompleteCommit", "CompleteCommit")
    assert sorted(tp for _, tp, committed, _ in leaders.written if committed) == [A, B]
    await new.stop()


async def test_a_failed_write_changes_nothing_and_an_ambiguous_one_reloads_the_log() -> None:
    log, leaders = FakeLog(), FakeLeaders()
    c = coordinator(log, leaders)
    pid, epoch = await begin(c, A)
    log.fail_with = E.not_enough_replicas
    assert await c.handle_end_transaction("tx", pid, epoch, True) == E.coordinator_not_available
    assert c.describe("tx").state == S.ONGOING and log.states()[-1] == "Ongoing"
    # timed out waiting for replication, but the record is in the leader's log: it counts
    log.fail_with, log.append_after_failure = E.request_timed_out, True
    assert await c.handle_end_transaction("tx", pid, epoch, True) == E.coordinator_not_available
    log.fail_with = None
    assert c.describe("tx").state in (S.PREPARE_COMMIT, S.COMPLETE_COMMIT)  # reloaded
    await until(lambda: log.states()[-1] == "CompleteCommit", "CompleteCommit")
    assert await c.handle_end_transaction("tx", pid, epoch, True) == E.none  # client's retry
    await c.stop()


async def test_a_lost_leadership_answers_not_coordinator() -> None:
    log, leaders = FakeLog(), FakeLeaders()
    c = coordinator(log, leaders)
    pid, epoch = await begin(c, A)
    log.epoch = None
    assert await c.handle_end_transaction("tx", pid, epoch, True) == E.not_coordinator
    result = await c.handle_init_producer_id("tx", 60_000, None)
    assert result.error == E.not_coordinator


async def test_a_transaction_past_its_timeout_is_aborted_with_a_fencing_epoch() -> None:
    log, leaders, clock, events = FakeLog(), FakeLeaders(), Clock(), []
    c = coordinator(log, leaders, clock, events)
    pid, epoch = await begin(c, A)
    c.start(SUPERVISOR.spawn)
    clock.now += 60_001
    await until(lambda: log.states()[-1] == "CompleteAbort", "CompleteAbort")
    assert leaders.written == [(1, A, False, epoch + 1)]  # the marker fences the producer
    assert await c.handle_end_transaction("tx", pid, epoch, True) == E.producer_fenced
    assert "txn_timed_out" in [t for t, _ in events]
    await c.stop()


async def test_a_new_instance_aborts_the_open_transaction_of_the_old_one() -> None:
    log, leaders, events = FakeLog(), FakeLeaders(), []
    c = coordinator(log, leaders, events=events)
    pid, epoch = await begin(c, A, B)
    result = await c.handle_init_producer_id("tx", 60_000, None)
    assert result.error == E.concurrent_transactions  # the client retries
    await until(lambda: log.states()[-1] == "CompleteAbort", "CompleteAbort")
    assert sorted(leaders.written) == [(1, A, False, epoch + 1), (2, B, False, epoch + 1)]
    result = await c.handle_init_producer_id("tx", 60_000, None)
    assert (result.error, result.producer_id, result.producer_epoch) == (E.none, pid, epoch + 2)
    assert (
        "producer_fenced",
        {
            "transactional_id": "tx",
            "producer_id": pid,
            "fenced_epoch": epoch,
            "producer_epoch": epoch + 1,
        },
    ) in events
    await c.stop()


async def test_kip_360_bump_and_describe() -> None:
    log, leaders = FakeLog(), FakeLeaders()
    c = coordinator(log, leaders)
    first = await c.handle_init_producer_id("tx", 60_000, None)
    again = await c.handle_init_producer_id(
        "tx", 60_000, ProducerIdAndEpoch(first.producer_id, first.producer_epoch)
    )
    assert (again.producer_id, again.producer_epoch) == (first.producer_id, 1)
    with pytest.raises(KafkaError) as missing:
        c.describe("nobody")
    assert missing.value.code == E.transactional_id_not_found
    assert c.describe("tx").producer_epoch == 1
    assert [md.transactional_id for md in c.loaded_transactions()] == ["tx"]
