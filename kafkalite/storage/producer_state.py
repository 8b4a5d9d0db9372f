"""Idempotent-producer state of one partition: what makes a retry harmless.

Per producer id the broker keeps the producer epoch and the sequence ranges and offsets
of its last five batches (the most a producer may have in flight). A batch identical in
epoch and sequence range to one of those is a retry whose acknowledgement was lost: it
is answered with the original offsets and not written again. A batch that leaves a gap
in the sequence is OUT_OF_ORDER_SEQUENCE_NUMBER; one from an older epoch is fenced.

The state is derived from the log alone (headers carry producer id, epoch and sequence),
so a restarted broker or a follower that replicated the log rebuilds the same answers.
Pure logic; not thread-safe.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from kafkalite.protocol.record_batch import RecordBatchHeader
from kafkalite.storage.errors import InvalidProducerEpochError, OutOfOrderSequenceError

BATCHES_KEPT = 5
SEQUENCE_MODULUS = 1 << 31


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


@dataclass(slots=True)
class ProducerEntry:
    producer_epoch: int
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=BATCHES_KEPT))
    current_txn_first_offset: int | None = None
    last_timestamp: int = -1

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1


@dataclass(frozen=True, slots=True)
class Duplicate:
    first_offset: int
    last_offset: int


class ProducerStateManager:
    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}

    def check(self, header: RecordBatchHeader) -> Duplicate | None:
        """Leader-side validation before append; raises for fenced or out-of-order batches."""
        if not header.has_producer_id or header.is_control:
            return None
        entry = self.producers.get(header.producer_id)
        if entry is None:
            return None  # unknown producer (new, or its state expired): accept any sequence
        if header.producer_epoch < entry.producer_epoch:
            raise InvalidProducerEpochError(
                f"producer {header.producer_id} epoch {header.producer_epoch} is older than "
                f"{entry.producer_epoch}"
            )
        if header.producer_epoch > entry.producer_epoch:
            if header.base_sequence != 0:
                raise OutOfOrderSequenceError(
                    f"new epoch {header.producer_epoch} must start at sequence 0, "
                    f"got {header.base_sequence}"
                )
            return None
        for batch in entry.batches:
            if batch.first_seq == header.base_sequence and batch.last_seq == header.last_sequence:
                return Duplicate(batch.first_offset, batch.last_offset)
        expected = (entry.last_seq + 1) % SEQUENCE_MODULUS
        if entry.batches and header.base_sequence != expected:
            raise OutOfOrderSequenceError(
                f"producer {header.producer_id}: expected sequence {expected}, "
                f"got {header.base_sequence}"
            )
        return None

    def update(self, header: RecordBatchHeader) -> None:
        """Apply an appended batch (leader append, follower append or log replay)."""
        if not header.has_producer_id:
            return
        entry = self.producers.get(header.producer_id)
        if entry is None or header.producer_epoch > entry.producer_epoch:
            entry = ProducerEntry(header.producer_epoch)
            self.producers[header.producer_id] = entry
        entry.last_timestamp = max(entry.last_timestamp, header.max_timestamp)
        if header.is_control:
            entry.current_txn_first_offset = None
            return
        if header.is_transactional and entry.current_txn_first_offset is None:
            entry.current_txn_first_offset = header.base_offset
        if header.base_sequence >= 0:
            entry.batches.append(
                BatchMetadata(
                    header.base_sequence,
                    header.last_sequence,
                    header.base_offset,
                    header.last_offset,
                    header.max_timestamp,
                )
            )

    def first_unstable_offset(self) -> int | None:
        """First offset of the oldest open transaction: the last stable offset's bound."""
        open_txns = [
            e.current_txn_first_offset
            for e in self.producers.values()
            if e.current_txn_first_offset is not None
        ]
        return min(open_txns) if open_txns else None

    def describe(self) -> list[dict[str, Any]]:
        return [
            {
                "producer_id": pid,
                "producer_epoch": e.producer_epoch,
                "last_sequence": e.last_seq,
                "last_timestamp": e.last_timestamp,
                "coordinator_epoch": -1,
                "current_txn_start_offset": (
                    -1 if e.current_txn_first_offset is None else e.current_txn_first_offset
                ),
            }
            for pid, e in sorted(self.producers.items())
        ]

    def clear(self) -> None:
        self.producers.clear()
