"""``__transaction_state`` records are Kafka's bytes (TransactionLogKey/Value version 0),
checked against the layout written out by hand here, not against our own encoder."""

from __future__ import annotations

import struct

import pytest

from kafkalite.coordinator.transaction.state import TransactionState, TxnTransitMetadata
from kafkalite.coordinator.transaction.transaction_log import (
    InvalidTransactionLogRecordError,
    decode,
    transition_record,
)
from kafkalite.protocol.records import Record

pytestmark = pytest.mark.unit


def kafka_string(s: str) -> bytes:
    return struct.pack(">h", len(s)) + s.encode()


def test_a_transition_is_written_as_kafka_writes_it() -> None:
    transit = TxnTransitMetadata(
        producer_id=4000,
        last_producer_id=-1,
        producer_epoch=3,
        last_producer_epoch=-1,
        txn_timeout_ms=60_000,
        txn_state=TransactionState.PREPARE_COMMIT,
        topic_partitions=frozenset({("orders", 2), ("orders", 0), ("audit", 1)}),
        txn_start_timestamp=1_700_000_000_000,
        txn_last_update_timestamp=1_700_000_000_500,
    )
    record = transition_record("payments-1", transit)
    assert record.key == struct.pack(">h", 0) + kafka_string("payments-1")
    assert record.value == (
        struct.pack(">hqhib", 0, 4000, 3, 60_000, 2)  # version, pid, epoch, timeout, status
        + struct.pack(">i", 2)  # two topics, sorted
        + kafka_string("audit")
        + struct.pack(">ii", 1, 1)
        + kafka_string("orders")
        + struct.pack(">iii", 2, 0, 2)
        + struct.pack(">qq", 1_700_000_000_500, 1_700_000_000_000)  # last update, start
    )
    assert decode(record) == ("payments-1", transit)


def test_a_tombstone_and_garbage() -> None:
    key = transition_record(
        "x",
        TxnTransitMetadata(1, -1, 0, -1, 1, TransactionState.EMPTY, frozenset(), -1, 0),
    ).key
    assert decode(Record(key, None)) == ("x", None)
    for bad in (Record(None, b""), Record(b"\x00\x07abc", b""), Record(key, b"\x00\x00\x01")):
        with pytest.raises(InvalidTransactionLogRecordError):
            decode(bad)
