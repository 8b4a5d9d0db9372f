"""Producer state of one partition: what makes a retry harmless and a transaction stable.

Per producer id the broker keeps the producer epoch and the sequence ranges and offsets
of its last five batches (the most a producer may have in flight). A batch identical in
epoch and sequence range to one of those is a retry whose acknowledgement was lost: it
is answered with the original offsets and not written again. A batch that leaves a gap
in the sequence is OUT_OF_ORDER_SEQUENCE_NUMBER; one from an older epoch is fenced.

Transactions: a producer's first transactional batch opens its transaction here (its
offset is the transaction's ``first_offset``); the control batch its coordinator has
written (a commit or abort marker) closes it. The *first unstable offset* is the first
offset of the oldest transaction that is still open, or whose marker the high watermark
has not yet passed (Kafka's ``ongoingTxns`` and ``unreplicatedTxns``): read_committed
consumers read no further (the last stable offset). Each marker also records the epoch
of the coordinator that wrote it, so an older coordinator's marker is refused.

The state is derived from the log alone (headers carry producer id, epoch, sequence and
the transactional and control flags; markers carry the outcome), so a restarted broker
or a follower that replicated the log rebuilds the same answers. Pure logic; not
thread-safe.
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from kafkalite.protocol.control_records import TransactionMarker
from kafkalite.protocol.record_batch import NO_SEQUENCE, RecordBatchHeader
from kafkalite.storage.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
    TransactionCoordinatorFencedError,
)

BATCHES_KEPT = 5
SEQUENCE_MODULUS = 1 << 31


class AppendOrigin(enum.Enum):
    """Who asks for an append to a leader, which decides what is checked (Kafka's names)."""

    CLIENT = "client"  # a producer: sequences checked, control batches refused
    COORDINATOR = "coordinator"  # a coordinator: markers, transactional offset commits


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
    coordinator_epoch: int = -1

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1


@dataclass(frozen=True, slots=True)
class Duplicate:
    first_offset: int
    last_offset: int


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    """A transaction a marker has just ended on this partition (Kafka's ``CompletedTxn``)."""

    producer_id: int
    first_offset: int
    last_offset: int  # the marker's own offset
    is_aborted: bool


@dataclass(frozen=True, slots=True)
class OngoingTxn:
    producer_id: int
    producer_epoch: int
    first_offset: int


class ProducerStateManager:
    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}
        self.ongoing: dict[int, int] = {}
        """Producer id -> first offset of its open transaction (every fetch asks for the
        oldest, so it is kept apart from the many producers that have none)."""
        self.unreplicated: deque[CompletedTxn] = deque()
        """Ended transactions whose marker the high watermark has not passed, by offset."""

    # ---- checks before a leader appends ------------------------------------------------

    def check(
        self, header: RecordBatchHeader, origin: AppendOrigin = AppendOrigin.CLIENT
    ) -> Duplicate | None:
        """Leader-side validation of a data batch; raises for fenced, out-of-order or
        out-of-transaction batches, returns the original offsets of a retried one."""
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
        if (
            origin == AppendOrigin.CLIENT
            and not header.is_transactional
            and (entry.current_txn_first_offset is not None)
        ):
            raise InvalidTxnStateError(
                f"producer {header.producer_id} has a transaction open at offset "
                f"{entry.current_txn_first_offset}: expected a transactional batch"
            )
        if origin != AppendOrigin.CLIENT or header.base_sequence == NO_SEQUENCE:
            return None  # coordinators write without sequences (Kafka checks clients only)
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

    def check_marker(self, header: RecordBatchHeader, marker: TransactionMarker) -> None:
        """A marker from an older producer epoch or an older coordinator is refused."""
        entry = self.producers.get(header.producer_id)
        if entry is None:
            return
        if header.producer_epoch < entry.producer_epoch:
            raise InvalidProducerEpochError(
                f"marker for producer {header.producer_id} epoch {header.producer_epoch}, "
                f"which is older than {entry.producer_epoch}"
            )
        if marker.coordinator_epoch < entry.coordinator_epoch:
            raise TransactionCoordinatorFencedError(
                f"marker from coordinator epoch {marker.coordinator_epoch}; producer "
                f"{header.producer_id} last heard from epoch {entry.coordinator_epoch}"
            )

    # ---- applying appended batches ------------------------------------------------------

    def update(
        self, header: RecordBatchHeader, marker: TransactionMarker | None = None
    ) -> CompletedTxn | None:
        """Apply an appended batch (leader append, follower append or log replay).

        ``marker`` is the decoded record of a control batch. Returns the transaction a
        marker ended, which the log indexes if it was aborted."""
        if not header.has_producer_id:
            return None
        entry = self.producers.get(header.producer_id)
        if entry is None:
            entry = self.producers[header.producer_id] = ProducerEntry(header.producer_epoch)
        elif header.producer_epoch > entry.producer_epoch:
            # a new epoch restarts sequences; an open transaction stays open until its
            # marker (a coordinator fencing a producer aborts it with the bumped epoch)
            entry.producer_epoch = header.producer_epoch
            entry.batches.clear()
        entry.last_timestamp = max(entry.last_timestamp, header.max_timestamp)
        if header.is_control:
            return self._end_transaction(header, entry, marker)
        if header.is_transactional and entry.current_txn_first_offset is None:
            entry.current_txn_first_offset = header.base_offset
            self.ongoing[header.producer_id] = header.base_offset
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
        return None

    def _end_transaction(
        self, header: RecordBatchHeader, entry: ProducerEntry, marker: TransactionMarker | None
    ) -> CompletedTxn | None:
        first = entry.current_txn_first_offset
        entry.current_txn_first_offset = None
        self.ongoing.pop(header.producer_id, None)
        if marker is None:
            return None  # a control batch that is not a transaction marker
        entry.coordinator_epoch = max(entry.coordinator_epoch, marker.coordinator_epoch)
        completed = CompletedTxn(
            header.producer_id,
            header.base_offset if first is None else first,
            header.base_offset,
            not marker.committed,
        )
        self.unreplicated.append(completed)
        return completed

    # ---- what the partition derives -----------------------------------------------------

    def first_unstable_offset(self, high_watermark: int) -> int | None:
        """First offset of the oldest transaction still open, or ended by a marker that
        the high watermark has not passed yet: the last stable offset's bound."""
        if not self.unreplicated and not self.ongoing:
            return None  # no transaction: what every non-transactional Fetch asks
        while self.unreplicated and self.unreplicated[0].last_offset < high_watermark:
            self.unreplicated.popleft()
        candidates = [t.first_offset for t in self.unreplicated]
        candidates.extend(self.ongoing.values())
        return min(candidates) if candidates else None

    def last_stable_offset_after(self, completed: CompletedTxn) -> int:
        """The LSO once ``completed`` ended, ignoring replication (the ``.txnindex``
        field): the first offset of another producer's open transaction, else past the
        marker."""
        others = [first for pid, first in self.ongoing.items() if pid != completed.producer_id]
        return min(others) if others else completed.last_offset + 1

    def ongoing_transactions(self) -> list[OngoingTxn]:
        """Open transactions, oldest first."""
        return sorted(
            (
                OngoingTxn(pid, self.producers[pid].producer_epoch, first)
                for pid, first in self.ongoing.items()
            ),
            key=lambda t: t.first_offset,
        )

    def describe(self) -> list[dict[str, Any]]:
        return [
            {
                "producer_id": pid,
                "producer_epoch": e.producer_epoch,
                "last_sequence": e.last_seq,
                "last_timestamp": e.last_timestamp,
                "coordinator_epoch": e.coordinator_epoch,
                "current_txn_start_offset": (
                    -1 if e.current_txn_first_offset is None else e.current_txn_first_offset
                ),
            }
            for pid, e in sorted(self.producers.items())
        ]

    def restore(self, producer_id: int, entry: ProducerEntry) -> None:
        """Put back a producer read from a snapshot, its open transaction included: a
        broker restarted in the middle of a transaction must keep its last stable offset
        below it (read_committed readers of a new leader saw records later aborted)."""
        self.producers[producer_id] = entry
        if entry.current_txn_first_offset is not None:
            self.ongoing[producer_id] = entry.current_txn_first_offset

    def clear(self) -> None:
        self.producers.clear()
        self.ongoing.clear()
        self.unreplicated.clear()
