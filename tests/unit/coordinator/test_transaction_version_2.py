"""Transaction version 2 (KIP-890 part 2) at the transaction coordinator: the producer
epoch moves on at every transaction's end, EndTxn retries are told apart by their epoch,
an abort needs no partition, and an exhausted epoch hands out a new producer id. The rules
driven directly, then the coordinator with its log and leaders faked."""

from __future__ import annotations

import pytest

from kafkalite.coordinator.transaction.operations import end_transaction_v2
from kafkalite.coordinator.transaction.state import (
    MAX_EPOCH,
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
)
from kafkalite.coordinator.transaction.transaction_log import decode, transition_record
from kafkalite.protocol.errors import ErrorCode
from tests.unit.coordinator.txn_fakes import (
    SUPERVISOR,
    A,
    B,
    Clock,
    FakeLeaders,
    FakeLog,
    coordinator,
    until,
)

pytestmark = pytest.mark.unit
S, E = TransactionState, ErrorCode
NOW = 5_000


def metadata(state: TransactionState, epoch: int = 3, **fields: object) -> TransactionMetadata:
    md = TransactionMetadata("tx", 7, producer_epoch=epoch, state=state, **fields)  # type: ignore[arg-type]
    if state == S.ONGOING:
        md.topic_partitions = {A}
    return md


def ended(md: TransactionMetadata, transit: object) -> TransactionMetadata:
    """Apply a prepared transition, as the coordinator does once it is written."""
    assert isinstance(transit, TxnTransitMetadata)
    md.complete_transition(transit)
    return md


def test_the_decision_bumps_the_producer_epoch() -> None:
    md = metadata(S.ONGOING)
    transit = end_transaction_v2(md, 7, 3, True, NOW)
    assert isinstance(transit, TxnTransitMetadata)
    assert (transit.txn_state, transit.producer_epoch, transit.last_producer_epoch) == (
        S.PREPARE_COMMIT,
        4,
        3,
    )
    assert transit.client_transaction_version == 2


def test_a_retry_is_told_apart_by_the_epoch_before_the_bump() -> None:
    md = metadata(S.ONGOING)
    md = ended(md, end_transaction_v2(md, 7, 3, True, NOW))
    assert end_transaction_v2(md, 7, 3, True, NOW) == E.concurrent_transactions  # markers
    assert end_transaction_v2(md, 7, 4, True, NOW) == E.producer_fenced
    md = ended(md, md.prepare_complete(NOW))
    assert md.producer_epoch == 4
    assert end_transaction_v2(md, 7, 3, True, NOW) == E.none  # the client's retry
    assert end_transaction_v2(md, 7, 3, False, NOW) == E.invalid_txn_state
    assert end_transaction_v2(md, 7, 2, True, NOW) == E.producer_fenced  # a zombie
    assert end_transaction_v2(md, 7, 4, True, NOW) == E.invalid_txn_state  # nothing to commit


def test_an_abort_needs_no_partition() -> None:
    for state in (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        transit = end_transaction_v2(metadata(state), 7, 3, False, NOW)
        assert isinstance(transit, TxnTransitMetadata), state
        assert (transit.txn_state, transit.producer_epoch) == (S.PREPARE_ABORT, 4)
        assert transit.txn_start_timestamp == NOW
    assert end_transaction_v2(metadata(S.EMPTY), 7, 3, True, NOW) == E.invalid_txn_state


def test_an_exhausted_epoch_hands_out_a_new_producer_id_at_epoch_0() -> None:
    md = metadata(S.ONGOING, epoch=MAX_EPOCH - 1)
    transit = end_transaction_v2(md, 7, MAX_EPOCH - 1, True, NOW, next_producer_id=8)
    assert isinstance(transit, TxnTransitMetadata)
    assert (transit.producer_epoch, transit.next_producer_id) == (MAX_EPOCH, 8)
    md = ended(ended(md, transit), md.prepare_complete(NOW))
    assert (md.producer_id, md.producer_epoch, md.last_producer_id) == (8, 0, 7)
    # the retry of the old id at its last epoch is the same transaction
    assert end_transaction_v2(md, 7, MAX_EPOCH - 1, True, NOW) == E.none


def test_a_fence_bumps_the_epoch_once_even_at_the_last_epoch() -> None:
    """A fence (a timeout, a new producer instance) aborts with the epoch it bumped to; the
    abort does not bump again (KAFKA-19367: Kafka 4.0.0 did, past Short.MaxValue from the
    last usable epoch)."""
    for epoch in (3, MAX_EPOCH - 1):
        md = metadata(S.ONGOING, epoch=epoch, client_transaction_version=2)
        fence = md.prepare_fence_producer_epoch()
        transit = end_transaction_v2(md, 7, fence.producer_epoch, False, NOW, from_client=False)
        assert isinstance(transit, TxnTransitMetadata)
        assert (transit.txn_state, transit.producer_epoch) == (S.PREPARE_ABORT, epoch + 1)
        assert transit.next_producer_id == -1


def test_a_transition_of_version_2_is_written_in_the_logs_version_1() -> None:
    transit = TxnTransitMetadata(
        8, 7, 0, MAX_EPOCH, 60_000, S.COMPLETE_COMMIT, frozenset(), 1, 2, -1, 2
    )
    record = transition_record("tx", transit)
    assert record.value is not None and record.value[:2] == b"\x00\x01"
    _, read = decode(record)
    assert read is not None
    assert (read.producer_id, read.last_producer_id, read.client_transaction_version) == (8, 7, 2)
    older = TxnTransitMetadata(8, -1, 0, -1, 60_000, S.EMPTY, frozenset(), 1, 2)
    assert transition_record("tx", older).value[:2] == b"\x00\x00"  # type: ignore[index]


@pytest.mark.asyncio
async def test_the_coordinator_answers_the_bumped_epoch_and_writes_the_markers_with_it() -> None:
    log, leaders = FakeLog(), FakeLeaders()
    c = coordinator(log, leaders)
    init = await c.handle_init_producer_id("tx", 60_000, None)
    pid, epoch = init.producer_id, init.producer_epoch
    # a leader adds each partition as the producer first writes there
    assert await c.handle_add_partitions("tx", pid, epoch, {A}, 2) == E.none
    assert await c.handle_add_partitions("tx", pid, epoch, {B}, 2) == E.none
    result = await c.handle_end_transaction("tx", pid, epoch, True, transaction_version=2)
    assert (result.error, result.producer_id, result.producer_epoch) == (E.none, pid, epoch + 1)
    await until(lambda: log.states()[-1] == "CompleteCommit", "CompleteCommit")
    assert sorted(leaders.written) == [(1, A, True, epoch + 1), (2, B, True, epoch + 1)]
    again = await c.handle_end_transaction("tx", pid, epoch, True, transaction_version=2)
    assert (again.error, again.producer_epoch) == (E.none, epoch + 1)  # a retry
    stale = await c.handle_add_partitions("tx", pid, epoch, {A}, 2)
    assert stale == E.producer_fenced  # the old epoch cannot open the next transaction
    successor = coordinator(log, FakeLeaders())  # a failover: the log says it all
    successor.check_coordinator("tx")
    await until(lambda: "tx" in successor.transactions, "the load")
    md = successor.transactions["tx"]
    assert (md.producer_epoch, md.client_transaction_version) == (epoch + 1, 2)
    await c.stop()
    await successor.stop()


@pytest.mark.asyncio
async def test_a_timed_out_transaction_is_aborted_with_the_fencing_epoch() -> None:
    log, leaders, clock = FakeLog(), FakeLeaders(), Clock()
    c = coordinator(log, leaders, clock)
    init = await c.handle_init_producer_id("tx", 60_000, None)
    pid, epoch = init.producer_id, init.producer_epoch
    assert await c.handle_add_partitions("tx", pid, epoch, {A}, 2) == E.none
    c.start(SUPERVISOR.spawn)
    clock.now += 60_001
    await until(lambda: log.states()[-1] == "CompleteAbort", "CompleteAbort")
    assert leaders.written == [(1, A, False, epoch + 1)]
    # the timed-out producer's commit names the epoch just before the abort's, as a retry
    # would: as in Kafka, refused as a commit of an aborted transaction; its abort is a retry
    late = await c.handle_end_transaction("tx", pid, epoch, True, transaction_version=2)
    assert late.error == E.invalid_txn_state
    late = await c.handle_end_transaction("tx", pid, epoch, False, transaction_version=2)
    assert (late.error, late.producer_epoch) == (E.none, epoch + 1)
    # the next instance's InitProducerId moves on from the fenced epoch
    again = await c.handle_init_producer_id("tx", 60_000, None)
    assert (again.error, again.producer_epoch) == (E.none, epoch + 2)
    await c.stop()


@pytest.mark.asyncio
async def test_a_new_instance_fences_an_open_transaction_of_version_2_with_one_bump() -> None:
    log, leaders = FakeLog(), FakeLeaders()
    c = coordinator(log, leaders)
    init = await c.handle_init_producer_id("tx", 60_000, None)
    pid, epoch = init.producer_id, init.producer_epoch
    assert await c.handle_add_partitions("tx", pid, epoch, {A}, 2) == E.none
    # the new instance's InitProducerId aborts the open transaction first: retried
    fencing = await c.handle_init_producer_id("tx", 60_000, None)
    assert fencing.error == E.concurrent_transactions
    await until(lambda: log.states()[-1] == "CompleteAbort", "CompleteAbort")
    assert leaders.written == [(1, A, False, epoch + 1)]  # the fence's epoch, not bumped again
    again = await c.handle_init_producer_id("tx", 60_000, None)
    assert (again.error, again.producer_id, again.producer_epoch) == (E.none, pid, epoch + 2)
    old = await c.handle_end_transaction("tx", pid, epoch + 1, True, transaction_version=2)
    assert old.error == E.producer_fenced  # the fence's epoch was never the producer's
    await c.stop()
