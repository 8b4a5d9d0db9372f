"""What each request may do to a transactional id, decided without any I/O.

These are the checks of Kafka's ``TransactionCoordinator`` (``handleInitProducerId``,
``handleAddPartitionsToTransaction``, ``endTransaction``), as pure functions. Each either
refuses with Kafka's error code, or prepares the transition that the coordinator then
writes to ``__transaction_state`` (and only once that write is committed, applies). The
error codes are what a client acts on:

- CONCURRENT_TRANSACTIONS: another transition is in progress (retry shortly);
- PRODUCER_FENCED: a newer instance with the same ``transactional.id`` took over (fatal);
- INVALID_PRODUCER_ID_MAPPING: no InitProducerId for this id, or another producer id;
- INVALID_TXN_STATE: e.g. commit when nothing was started, or abort after a commit.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkalite.coordinator.transaction.state import (
    MAX_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    IllegalTransitionError,
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
    is_epoch_exhausted,
)
from kafkalite.coordinator.transaction.transaction_log import MAX_TRANSACTIONAL_ID_BYTES
from kafkalite.protocol.errors import ErrorCode
from kafkalite.topic_partition import TopicPartition

S = TransactionState
Decision = ErrorCode | TxnTransitMetadata


@dataclass(frozen=True, slots=True)
class ProducerIdAndEpoch:
    producer_id: int
    epoch: int


def check_transactional_id(transactional_id: str | None) -> ErrorCode:
    """Kafka answers INVALID_REQUEST for an empty id; one too long for the transaction
    log's int16 string length cannot be stored, so it gets the same answer."""
    if not transactional_id:
        return ErrorCode.invalid_request
    if len(transactional_id.encode()) > MAX_TRANSACTIONAL_ID_BYTES:
        return ErrorCode.invalid_request
    return ErrorCode.none


def check_timeout(timeout_ms: int, max_timeout_ms: int) -> ErrorCode:
    """``transaction.timeout.ms`` must be positive and at most ``transaction.max.timeout.ms``."""
    if 0 < timeout_ms <= max_timeout_ms:
        return ErrorCode.none
    return ErrorCode.invalid_transaction_timeout


def needs_new_producer_id(md: TransactionMetadata, expected: ProducerIdAndEpoch | None) -> bool:
    """InitProducerId would rotate to a fresh producer id (the epoch is exhausted)."""
    return md.is_producer_epoch_exhausted and (
        expected is None or expected.epoch == md.producer_epoch
    )


def init_producer_id(
    md: TransactionMetadata,
    timeout_ms: int,
    expected: ProducerIdAndEpoch | None,
    now_ms: int,
    rotation_producer_id: int | None = None,
) -> Decision:
    """InitProducerId for an existing (or just created) id.

    Idle: the next epoch (fencing any older instance). An open transaction: a fence
    (``PREPARE_EPOCH_FENCE``) - the coordinator aborts it with the bumped epoch and answers
    CONCURRENT_TRANSACTIONS, so the client retries and then gets an epoch bumped again."""

    def is_valid(given: ProducerIdAndEpoch) -> bool:
        return (
            md.producer_epoch == NO_PRODUCER_EPOCH
            or given.producer_id == md.producer_id
            or (given.producer_id == md.last_producer_id and is_epoch_exhausted(given.epoch))
        )

    if md.pending_transition_in_progress:
        return ErrorCode.concurrent_transactions
    if expected is not None and not is_valid(expected):
        return ErrorCode.producer_fenced
    match md.state:
        case S.PREPARE_ABORT | S.PREPARE_COMMIT:
            return ErrorCode.concurrent_transactions
        case S.COMPLETE_ABORT | S.COMPLETE_COMMIT | S.EMPTY:
            if needs_new_producer_id(md, expected):
                if rotation_producer_id is None:
                    return ErrorCode.concurrent_transactions
                return md.prepare_producer_id_rotation(
                    rotation_producer_id, timeout_ms, now_ms, expected is not None
                )
            transit = md.prepare_increment_producer_epoch(
                timeout_ms, expected.epoch if expected else None, now_ms
            )
            return ErrorCode.producer_fenced if transit is None else transit
        case S.ONGOING:
            return md.prepare_fence_producer_epoch()
        case _:
            raise IllegalTransitionError(f"{md.transactional_id} is {md.state.state_name}")


def add_partitions(
    md: TransactionMetadata | None,
    producer_id: int,
    producer_epoch: int,
    partitions: set[TopicPartition],
    now_ms: int,
    client_transaction_version: int = 0,
) -> Decision:
    """AddPartitionsToTxn and AddOffsetsToTxn: the transaction (re)starts or grows.
    ``ErrorCode.none`` when every partition is already in it (nothing to write)."""
    if md is None or md.producer_id != producer_id:
        return ErrorCode.invalid_producer_id_mapping
    if md.producer_epoch != producer_epoch:
        return ErrorCode.producer_fenced
    if md.pending_transition_in_progress or md.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        return ErrorCode.concurrent_transactions
    if md.state == S.ONGOING and partitions <= md.topic_partitions:
        return ErrorCode.none
    return md.prepare_add_partitions(partitions, now_ms, client_transaction_version)


def verify_partitions(
    md: TransactionMetadata | None,
    producer_id: int,
    producer_epoch: int,
    partitions: set[TopicPartition],
) -> ErrorCode | dict[TopicPartition, ErrorCode]:
    """KIP-890's check for a partition leader (AddPartitionsToTxn with ``verify_only``): is
    each partition in the producer's ongoing transaction? TRANSACTION_ABORTABLE for one
    that is not (Kafka's ``handleVerifyPartitionsInTransaction``); an error for them all
    when the producer is not the id's current one, or the transaction is ending."""
    if md is None or md.producer_id != producer_id:
        return ErrorCode.invalid_producer_id_mapping
    if md.producer_epoch != producer_epoch:
        return ErrorCode.producer_fenced
    if md.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        return ErrorCode.concurrent_transactions
    return {
        tp: ErrorCode.none if tp in md.topic_partitions else ErrorCode.transaction_abortable
        for tp in partitions
    }


_COMPLETED_AS = {S.COMPLETE_COMMIT: True, S.COMPLETE_ABORT: False}
_PREPARED_AS = {S.PREPARE_COMMIT: True, S.PREPARE_ABORT: False}


def end_transaction(
    md: TransactionMetadata | None,
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    now_ms: int,
    from_client: bool = True,
) -> Decision:
    """EndTxn from the producer, or an abort the coordinator decides itself (a timeout or
    a fence, ``from_client=False``, with the bumped epoch). A repeated EndTxn of a
    transaction that already ended the same way succeeds (the client's retry)."""
    if md is None or md.producer_id != producer_id:
        return ErrorCode.invalid_producer_id_mapping
    if (from_client and producer_epoch != md.producer_epoch) or (
        producer_epoch < md.producer_epoch
    ):
        return ErrorCode.producer_fenced
    if md.pending_transition_in_progress and (
        from_client or md.pending_state != S.PREPARE_EPOCH_FENCE
    ):
        return ErrorCode.concurrent_transactions
    if md.state == S.ONGOING:
        if md.pending_state == S.PREPARE_EPOCH_FENCE:
            if commit:
                raise IllegalTransitionError(f"{md.transactional_id}: commit while fencing")
            md.adopt_fenced_epoch(producer_epoch)
        target = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
        return md.prepare_abort_or_commit(target, now_ms)
    if md.state in _COMPLETED_AS:
        return ErrorCode.none if _COMPLETED_AS[md.state] == commit else ErrorCode.invalid_txn_state
    if md.state in _PREPARED_AS:
        if _PREPARED_AS[md.state] == commit:
            return ErrorCode.concurrent_transactions
        return ErrorCode.invalid_txn_state
    if md.state == S.EMPTY:
        return ErrorCode.invalid_txn_state
    raise IllegalTransitionError(f"{md.transactional_id} is {md.state.state_name}")


def end_transaction_v2(
    md: TransactionMetadata | None,
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    now_ms: int,
    from_client: bool = True,
    next_producer_id: int = NO_PRODUCER_ID,
) -> Decision:
    """EndTxn of transaction version 2 (EndTxn v5; Kafka's ``endTransaction`` when the
    client's transaction version supports the epoch bump): the decision bumps the
    producer epoch (``prepare_abort_or_commit``), so the same epoch in two EndTxns means
    two transactions, not a retry. ``ErrorCode.none``: a retry of a transaction that
    already ended that way (answered with the current id and epoch). An abort needs no
    partition added: from Empty or a completed transaction it is written as one.
    ``next_producer_id`` is the id to hand out when the epoch is exhausted."""
    if md is None:
        return ErrorCode.invalid_producer_id_mapping
    retry = _v2_retry(md, producer_id, producer_epoch, from_client)
    if isinstance(retry, ErrorCode):
        return retry
    fencing = md.pending_state == S.PREPARE_EPOCH_FENCE

    def decide(no_partition_added: bool) -> TxnTransitMetadata:
        target = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
        if fencing:
            # the fence already bumped the epoch: the abort is written with that epoch and
            # not bumped again (KAFKA-19367: Kafka 4.0.0 bumped twice, past Short.MaxValue
            # when the fenced epoch was the last one)
            md.adopt_fenced_epoch(producer_epoch)
            return md.prepare_abort_or_commit(target, now_ms, False)
        next_id = next_producer_id if md.is_producer_epoch_exhausted else NO_PRODUCER_ID
        return md.prepare_abort_or_commit(target, now_ms, True, next_id, no_partition_added)

    if md.state == S.ONGOING:
        return decide(no_partition_added=False)
    if md.state in _COMPLETED_AS:
        if _COMPLETED_AS[md.state] == commit and retry:
            return ErrorCode.none
        if not commit and not retry:
            return decide(no_partition_added=True)  # a new, empty transaction, aborted
        return ErrorCode.invalid_txn_state
    if md.state in _PREPARED_AS:
        if _PREPARED_AS[md.state] == commit:
            return ErrorCode.concurrent_transactions
        return ErrorCode.invalid_txn_state
    if md.state == S.EMPTY:
        return ErrorCode.invalid_txn_state if commit else decide(no_partition_added=True)
    raise IllegalTransitionError(f"{md.transactional_id} is {md.state.state_name}")


def _v2_retry(
    md: TransactionMetadata, producer_id: int, producer_epoch: int, from_client: bool
) -> ErrorCode | bool:
    """Whether a transaction version 2 EndTxn is a retry (True), a new request (False), or
    refused. A retry names the epoch just before the current one, the one the decision
    bumped (or, after an exhausted epoch moved to a new producer id, the old id at the
    last epoch)."""
    fencing = md.pending_state == S.PREPARE_EPOCH_FENCE
    on_overflow = (
        not fencing
        and md.last_producer_id == producer_id
        and producer_epoch == MAX_EPOCH - 1
        and md.producer_epoch == 0
    )
    on_bump = not fencing and md.producer_epoch == producer_epoch + 1
    if fencing:
        valid = (not from_client or producer_epoch == md.producer_epoch) and (
            producer_epoch >= md.producer_epoch
        )
    elif md.state in _PREPARED_AS:
        valid = on_bump
    elif md.state in _COMPLETED_AS:
        valid = on_bump or on_overflow or producer_epoch == md.producer_epoch
    else:
        valid = producer_epoch == md.producer_epoch
    if md.producer_id != producer_id and not on_overflow:
        return ErrorCode.invalid_producer_id_mapping
    if not valid:
        return ErrorCode.producer_fenced
    if md.pending_transition_in_progress and not fencing:
        return ErrorCode.concurrent_transactions
    return on_bump or on_overflow
