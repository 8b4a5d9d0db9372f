"""A coordinator loads a big ``__transaction_state`` partition in chunks, yielding to the
loop between them, and answers COORDINATOR_LOAD_IN_PROGRESS for its ids until it is done
(Kafka's answer: the client retries), then serves them from the state it rebuilt."""

from __future__ import annotations

import asyncio

import pytest

from kafkalite.coordinator.transaction.coordinator import TransactionCoordinator
from kafkalite.coordinator.transaction.state import TransactionMetadata
from kafkalite.coordinator.transaction.transaction_log import transition_record
from kafkalite.protocol.errors import KafkaError
from tests.unit.coordinator.txn_fakes import (
    A,
    E,
    FakeLeaders,
    FakeLog,
    S,
    begin,
    coordinator,
    until,
)

pytestmark = [pytest.mark.unit, pytest.mark.asyncio]


def many_ids(log: FakeLog, count: int) -> None:
    """``count`` ids that each committed a transaction earlier (one record each)."""
    for i in range(count):
        md = TransactionMetadata(f"id-{i}", 1000 + i, producer_epoch=0)
        transit = md.prepare_increment_producer_epoch(60_000, None, 1)
        assert transit is not None
        log.records.append(transition_record(md.transactional_id, transit))


async def test_requests_during_a_load_get_load_in_progress_and_succeed_after_it() -> None:
    log, leaders, events = FakeLog(), FakeLeaders(), []
    many_ids(log, 50)
    c = coordinator(log, leaders, events=events, load_buffer_bytes=5)  # 10 chunks
    assert (await c.handle_init_producer_id("tx", 60_000, None)).error == (
        E.coordinator_load_in_progress
    )
    assert await c.handle_add_partitions("tx", 1, 0, {A}) == E.coordinator_load_in_progress
    assert (
        await c.handle_end_transaction("tx", 1, 0, True)
    ).error == E.coordinator_load_in_progress
    with pytest.raises(KafkaError) as raised:
        c.describe("id-3")
    assert raised.value.code == E.coordinator_load_in_progress
    assert c.is_loading() and c.transactions == {}  # nothing half-loaded is served
    assert [t for t, _ in events] == ["txn_partition_loading"]

    await until(lambda: not c.is_loading(), "the load to finish")
    assert len(c.transactions) == 50 and c.describe("id-49").producer_epoch == 1
    assert [t for t, _ in events] == ["txn_partition_loading", "txn_partition_loaded"]
    await begin(c, A)  # the client's retry now succeeds
    assert c.describe("tx").state == S.ONGOING
    await c.stop()


async def test_the_loop_runs_other_work_between_chunks() -> None:
    log, leaders = FakeLog(), FakeLeaders()
    many_ids(log, 40)
    c = coordinator(log, leaders, load_buffer_bytes=4)
    ticks = 0

    async def other_work() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(other_work())
    with pytest.raises(KafkaError):
        c.check_coordinator("tx")
    await until(lambda: not c.is_loading(), "the load to finish")
    task.cancel()
    assert ticks >= 9  # at least once between each two of the 10 chunks
    await c.stop()


async def test_a_small_partition_is_served_at_once() -> None:
    log, leaders = FakeLog(), FakeLeaders()
    many_ids(log, 3)
    c = coordinator(log, leaders, load_buffer_bytes=5)
    assert (await c.handle_init_producer_id("id-1", 60_000, None)).producer_epoch == 2
    await c.stop()


def mid_load(ids: int) -> tuple[FakeLog, TransactionCoordinator]:
    """A coordinator that has begun loading ``ids`` ids, five per chunk."""
    log = FakeLog()
    many_ids(log, ids)
    c = coordinator(log, FakeLeaders(), load_buffer_bytes=5)
    with pytest.raises(KafkaError):
        c.check_coordinator("tx")
    return log, c


async def test_a_new_epoch_during_a_load_starts_over_from_the_log() -> None:
    log, c = mid_load(30)
    many_ids(log, 31)  # another coordinator wrote id-30 meanwhile, then led again
    log.epoch = 2
    with pytest.raises(KafkaError):
        c.check_coordinator("tx")
    await until(lambda: not c.is_loading(), "the load to finish")
    assert c.coordinator_epoch("id-30") == 2 and c.describe("id-30").producer_epoch == 1
    await c.stop()


async def test_leadership_lost_during_a_load_answers_not_coordinator() -> None:
    log, c = mid_load(30)
    log.epoch = None
    await asyncio.sleep(0.05)
    assert (await c.handle_init_producer_id("tx", 60_000, None)).error == E.not_coordinator
    assert not c.is_loading() and c.transactions == {}
    await c.stop()


async def test_a_decided_transaction_found_by_a_chunked_load_gets_its_markers() -> None:
    log, leaders = FakeLog(), FakeLeaders()
    old = coordinator(log, leaders)
    pid, epoch = await begin(old, A)
    leaders.answer = lambda broker, marker, tps: None  # markers cannot be written yet
    assert (await old.handle_end_transaction("tx", pid, epoch, commit=True)).error == E.none
    await old.stop()
    many_ids(log, 30)
    log.epoch = 2
    leaders.answer = lambda broker, marker, tps: E.none
    new = coordinator(log, leaders, load_buffer_bytes=5)
    with pytest.raises(KafkaError):
        new.check_coordinator("tx")
    await until(lambda: log.states()[-1] == "CompleteCommit", "the commit completed")
    await new.stop()
