"""The transaction coordinator with its log and its partition leaders faked: what it
writes, in which order, and how it finishes decided transactions after a failover."""

from __future__ import annotations

import pytest

from kafkalite.coordinator.transaction.markers import MarkerOutcome, TxnMarkerEntry, write_markers
from kafkalite.coordinator.transaction.operations import ProducerIdAndEpoch
from kafkalite.protocol.errors import ErrorCode, KafkaError
from kafkalite.topic_partition import TopicPartition
from tests.unit.coordinator.txn_fakes import (
    SUPERVISOR,
    A,
    B,
    Clock,
    E,
    FakeLeaders,
    FakeLog,
    S,
    begin,
    coordinator,
    until,
)

pytestmark = [pytest.mark.unit, pytest.mark.asyncio]


async def test_a_commit_is_written_before_its_markers_and_completed_after_them() -> None:
    log, leaders, events = FakeLog(), FakeLeaders(), []
    c = coordinator(log, leaders, events=events)
    pid, epoch = await begin(c, A, B)
    assert (await c.handle_end_transaction("tx", pid, epoch, commit=True)).error == E.none
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
    assert (await old.handle_end_transaction("tx", pid, epoch, commit=True)).error == E.none
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
    assert (
        await c.handle_end_transaction("tx", pid, epoch, True)
    ).error == E.coordinator_not_available
    assert c.describe("tx").state == S.ONGOING and log.states()[-1] == "Ongoing"
    # timed out waiting for replication, but the record is in the leader's log: it counts
    log.fail_with, log.append_after_failure = E.request_timed_out, True
    assert (
        await c.handle_end_transaction("tx", pid, epoch, True)
    ).error == E.coordinator_not_available
    log.fail_with = None
    assert c.describe("tx").state in (S.PREPARE_COMMIT, S.COMPLETE_COMMIT)  # reloaded
    await until(lambda: log.states()[-1] == "CompleteCommit", "CompleteCommit")
    assert (
        await c.handle_end_transaction("tx", pid, epoch, True)
    ).error == E.none  # client's retry
    await c.stop()


async def test_a_lost_leadership_answers_not_coordinator() -> None:
    log, leaders = FakeLog(), FakeLeaders()
    c = coordinator(log, leaders)
    pid, epoch = await begin(c, A)
    log.epoch = None
    assert (await c.handle_end_transaction("tx", pid, epoch, True)).error == E.not_coordinator
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
    assert (await c.handle_end_transaction("tx", pid, epoch, True)).error == E.producer_fenced
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


async def test_the_timeout_check_runs_often_only_while_a_transaction_is_in_flight() -> None:
    log, leaders = FakeLog(), FakeLeaders()
    c = coordinator(log, leaders)
    assert not c.watching()
    pid, epoch = await begin(c, A)
    assert c.watching()  # Ongoing: its timeout runs
    assert (await c.handle_end_transaction("tx", pid, epoch, commit=True)).error == E.none
    await until(lambda: log.states()[-1] == "CompleteCommit", "CompleteCommit")
    assert not c.watching()
    await c.stop()
