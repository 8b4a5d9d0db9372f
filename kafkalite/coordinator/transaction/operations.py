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
    NO_PRODUCER_EPOCH,
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
    return md.prepare_add_partitions(partitions, now_ms)


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
