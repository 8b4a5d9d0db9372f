"""The transaction state machine and the request rules, driven directly (no I/O)."""

from __future__ import annotations

import dataclasses

import pytest

from kafkalite.coordinator.transaction import operations
from kafkalite.coordinator.transaction.operations import ProducerIdAndEpoch
from kafkalite.coordinator.transaction.state import (
    MAX_EPOCH,
    IllegalTransitionError,
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
)
from kafkalite.protocol.errors import ErrorCode

pytestmark = pytest.mark.unit
S = TransactionState
E = ErrorCode
T0 = ("t", 0)
T1 = ("t", 1)


def applied(md: TransactionMetadata, decision: ErrorCode | TxnTransitMetadata) -> None:
    """The coordinator's write succeeded."""
    assert isinstance(decision, TxnTransitMetadata), decision
    md.complete_transition(decision)


def initialised(epoch_bumps: int = 1) -> TransactionMetadata:
    md = TransactionMetadata("tx", producer_id=7)
    for _ in range(epoch_bumps):
        applied(md, operations.init_producer_id(md, 60_000, None, now_ms=1))
    return md


def ongoing(*partitions: tuple[str, int]) -> TransactionMetadata:
    md = initialised()
    applied(md, operations.add_partitions(md, 7, 0, set(partitions or {T0}), now_ms=10))
    return md


def test_a_transaction_goes_through_kafkas_states() -> None:
    md = initialised()
    assert (md.state, md.producer_epoch) == (S.EMPTY, 0)
    applied(md, operations.add_partitions(md, 7, 0, {T0}, now_ms=10))
    assert (md.state, md.txn_start_timestamp) == (S.ONGOING, 10)
    applied(md, operations.add_partitions(md, 7, 0, {T1}, now_ms=20))
    assert md.topic_partitions == {T0, T1} and md.txn_start_timestamp == 10
    assert operations.add_partitions(md, 7, 0, {T1}, now_ms=30) == E.none  # nothing to write
    applied(md, operations.end_transaction(md, 7, 0, commit=True, now_ms=40))
    assert md.state == S.PREPARE_COMMIT
    applied(md, md.prepare_complete(now_ms=50))
    assert (md.state, md.topic_partitions) == (S.COMPLETE_COMMIT, set())
    applied(md, operations.add_partitions(md, 7, 0, {T1}, now_ms=60))
    assert (md.topic_partitions, md.txn_start_timestamp) == ({T1}, 60)  # a new transaction


def test_nothing_changes_until_the_write_is_completed() -> None:
    md = ongoing()
    decision = operations.end_transaction(md, 7, 0, commit=True, now_ms=40)
    assert isinstance(decision, TxnTransitMetadata)
    assert md.state == S.ONGOING and md.pending_state == S.PREPARE_COMMIT
    # while the write is in flight every other request must wait
    assert operations.add_partitions(md, 7, 0, {T1}, 41) == E.concurrent_transactions
    assert operations.end_transaction(md, 7, 0, False, 41) == E.concurrent_transactions
    assert operations.init_producer_id(md, 60_000, None, 41) == E.concurrent_transactions
    md.abort_pending()  # the write failed
    assert md.state == S.ONGOING and md.pending_state is None


def test_end_txn_errors_a_client_acts_on() -> None:
    assert operations.end_transaction(None, 7, 0, True, 1) == E.invalid_producer_id_mapping
    md = initialised()
    assert operations.end_transaction(md, 7, 0, True, 1) == E.invalid_txn_state  # nothing begun
    assert operations.end_transaction(md, 8, 0, True, 1) == E.invalid_producer_id_mapping
    md = ongoing()
    assert operations.end_transaction(md, 7, 1, True, 1) == E.producer_fenced  # not its epoch
    applied(md, operations.end_transaction(md, 7, 0, commit=True, now_ms=2))
    assert operations.end_transaction(md, 7, 0, True, 3) == E.concurrent_transactions
    assert operations.end_transaction(md, 7, 0, False, 3) == E.invalid_txn_state
    applied(md, md.prepare_complete(4))
    assert operations.end_transaction(md, 7, 0, True, 5) == E.none  # a retried commit
    assert operations.end_transaction(md, 7, 0, False, 5) == E.invalid_txn_state


def test_init_producer_id_bumps_the_epoch_and_fences_the_older_instance() -> None:
    md = initialised(2)
    assert md.producer_epoch == 1
    assert operations.add_partitions(md, 7, 0, {T0}, 1) == E.producer_fenced  # epoch 0: a zombie


def test_init_producer_id_with_an_open_transaction_fences_and_aborts_it() -> None:
    md = ongoing()
    fence = operations.init_producer_id(md, 60_000, None, now_ms=20)
    assert isinstance(fence, TxnTransitMetadata)
    assert (fence.txn_state, fence.producer_epoch) == (S.PREPARE_EPOCH_FENCE, 1)
    # the zombie's own EndTxn cannot slip in while the fence is pending
    assert operations.end_transaction(md, 7, 0, True, 21) == E.concurrent_transactions
    abort = operations.end_transaction(md, 7, 1, commit=False, now_ms=21, from_client=False)
    assert isinstance(abort, TxnTransitMetadata)
    assert (abort.txn_state, abort.producer_epoch, abort.topic_partitions) == (
        S.PREPARE_ABORT,
        1,
        frozenset({T0}),
    )
    applied(md, abort)
    assert operations.end_transaction(md, 7, 0, True, 22) == E.producer_fenced
    applied(md, md.prepare_complete(23))
    applied(md, operations.init_producer_id(md, 60_000, None, now_ms=24))
    assert md.producer_epoch == 2  # bumped a second time when the client retries


def test_kip_360_a_producer_naming_its_epoch_bumps_it_and_a_retry_is_recognised() -> None:
    md = initialised()
    applied(md, operations.init_producer_id(md, 60_000, ProducerIdAndEpoch(7, 0), 1))
    assert (md.producer_epoch, md.last_producer_epoch) == (1, 0)
    # the same request again (its response was lost): the same epoch, no second bump
    applied(md, operations.init_producer_id(md, 60_000, ProducerIdAndEpoch(7, 0), 2))
    assert md.producer_epoch == 1
    # a new instance resets the memory; the old one's epoch is now stale
    applied(md, operations.init_producer_id(md, 60_000, None, 3))
    assert operations.init_producer_id(md, 60_000, ProducerIdAndEpoch(7, 1), 4) == (
        E.producer_fenced
    )
    assert operations.init_producer_id(md, 60_000, ProducerIdAndEpoch(99, 0), 4) == (
        E.producer_fenced
    )


def test_an_exhausted_epoch_rotates_to_a_new_producer_id() -> None:
    md = initialised()
    md.producer_epoch = MAX_EPOCH - 1
    assert operations.needs_new_producer_id(md, None)
    assert operations.init_producer_id(md, 60_000, None, 1) == E.concurrent_transactions
    applied(md, operations.init_producer_id(md, 60_000, None, 1, rotation_producer_id=8))
    assert (md.producer_id, md.producer_epoch, md.last_producer_id) == (8, 0, 7)


def test_bad_ids_and_timeouts() -> None:
    assert operations.check_transactional_id("") == E.invalid_request
    assert operations.check_transactional_id("x" * 100_000) == E.invalid_request
    assert operations.check_transactional_id("x" * 32767) == E.none
    assert operations.check_timeout(0, 900_000) == E.invalid_transaction_timeout
    assert operations.check_timeout(900_001, 900_000) == E.invalid_transaction_timeout
    assert operations.check_timeout(60_000, 900_000) == E.none


def test_illegal_transitions_are_refused() -> None:
    md = initialised()
    with pytest.raises(IllegalTransitionError):
        md.prepare_complete(1)  # Empty -> CompleteAbort is not a transition
    md = ongoing()
    decision = operations.end_transaction(md, 7, 0, commit=True, now_ms=40)
    assert isinstance(decision, TxnTransitMetadata)
    with pytest.raises(IllegalTransitionError):  # not the transition that is pending
        md.complete_transition(dataclasses.replace(decision, txn_state=S.PREPARE_ABORT))
    with pytest.raises(IllegalTransitionError):  # one at a time
        md.prepare_abort_or_commit(S.PREPARE_ABORT, 41)
