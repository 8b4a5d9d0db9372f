"""KIP-890's verification, the pure parts: the coordinator's answer to a partition leader,
and the guard that makes a verification stale once a marker ends the transaction."""

from __future__ import annotations

import pytest

from kafkalite.broker.data_plane.transaction_verification import VerificationGuards
from kafkalite.coordinator.transaction.operations import verify_partitions
from kafkalite.coordinator.transaction.state import TransactionMetadata, TransactionState
from kafkalite.protocol.errors import ErrorCode

pytestmark = pytest.mark.unit

P0, P1 = ("t", 0), ("t", 1)


def ongoing(*partitions: tuple[str, int]) -> TransactionMetadata:
    return TransactionMetadata(
        "txn", 7, producer_epoch=3, state=TransactionState.ONGOING, topic_partitions=set(partitions)
    )


def test_a_partition_of_the_ongoing_transaction_is_verified_and_another_is_not() -> None:
    assert verify_partitions(ongoing(P0), 7, 3, {P0, P1}) == {
        P0: ErrorCode.none,
        P1: ErrorCode.transaction_abortable,
    }


def test_another_producer_or_epoch_or_an_ending_transaction_fails_them_all() -> None:
    assert verify_partitions(None, 7, 3, {P0}) == ErrorCode.invalid_producer_id_mapping
    assert verify_partitions(ongoing(P0), 8, 3, {P0}) == ErrorCode.invalid_producer_id_mapping
    assert verify_partitions(ongoing(P0), 7, 2, {P0}) == ErrorCode.producer_fenced
    ending = ongoing(P0)
    ending.state = TransactionState.PREPARE_COMMIT
    assert verify_partitions(ending, 7, 3, {P0}) == ErrorCode.concurrent_transactions


def test_a_marker_makes_a_verification_in_flight_stale() -> None:
    guards = VerificationGuards()
    token = guards.start(P0, 7)
    assert guards.start(P0, 7) is token  # a second request in flight shares it
    assert guards.holds(P0, 7, token)
    guards.marker_written(P1, 7)  # another partition's marker changes nothing here
    guards.marker_written(P0, 8)  # nor another producer's
    assert guards.holds(P0, 7, token)
    guards.marker_written(P0, 7)
    assert not guards.holds(P0, 7, token)
    assert guards.start(P0, 7) is not token
