"""Sequence checks of the idempotent producer, driven with batch headers directly."""

from __future__ import annotations

import pytest

from kafkalite.protocol.record_batch import parse_header
from kafkalite.protocol.records import Record, build_batch
from kafkalite.storage.errors import InvalidProducerEpochError, OutOfOrderSequenceError
from kafkalite.storage.producer_state import Duplicate, ProducerStateManager

pytestmark = pytest.mark.unit


def header(seq: int, count: int = 1, epoch: int = 0, offset: int = 0, pid: int = 1):
    return parse_header(
        build_batch(
            [Record(None, b"x", 0)] * count,
            base_offset=offset,
            producer_id=pid,
            producer_epoch=epoch,
            base_sequence=seq,
        )
    )


def appended(state: ProducerStateManager, *headers) -> None:
    for h in headers:
        assert state.check(h) is None
        state.update(h)


def test_in_order_batches_are_accepted_and_retries_deduplicated() -> None:
    state = ProducerStateManager()
    appended(state, header(0, 2, offset=0), header(2, 3, offset=10))
    assert state.check(header(0, 2)) == Duplicate(0, 1)
    assert state.check(header(2, 3)) == Duplicate(10, 12)


def test_only_the_last_five_batches_are_remembered() -> None:
    state = ProducerStateManager()
    appended(state, *(header(i, 1, offset=i) for i in range(6)))
    assert state.check(header(1, 1)) == Duplicate(1, 1)
    with pytest.raises(OutOfOrderSequenceError):
        state.check(header(0, 1))  # evicted: now looks like a gap backwards


def test_a_gap_is_out_of_order() -> None:
    state = ProducerStateManager()
    appended(state, header(0, 1))
    with pytest.raises(OutOfOrderSequenceError):
        state.check(header(2, 1))


def test_epochs_fence_and_reset_sequences() -> None:
    state = ProducerStateManager()
    appended(state, header(0, 1, epoch=1))
    with pytest.raises(InvalidProducerEpochError):
        state.check(header(1, 1, epoch=0))
    with pytest.raises(OutOfOrderSequenceError):
        state.check(header(5, 1, epoch=2))  # a new epoch starts at sequence 0
    appended(state, header(0, 1, epoch=2))
    assert state.describe()[0]["producer_epoch"] == 2


def test_unknown_producers_may_start_anywhere_and_sequences_wrap() -> None:
    state = ProducerStateManager()
    appended(state, header(2**31 - 1, 1), header(0, 1, offset=1))
    assert state.describe()[0]["last_sequence"] == 0
