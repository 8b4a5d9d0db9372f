"""One transactional id's state at its coordinator: Kafka's ``TransactionMetadata``, pure.

States and the moves between them are Kafka's (``TransactionState``)::

                 AddPartitionsToTxn / AddOffsetsToTxn
    Empty ----------------------------------------------> Ongoing <--+ more partitions
      ^                                                    |  |  |   |
      |  InitProducerId                         EndTxn(commit) | +---+
      |  (epoch + 1)                                       |  EndTxn(abort), timeout,
      |                                                    v  InitProducerId (fence)
    CompleteCommit <--- all markers written --- PrepareCommit |
    CompleteAbort  <--- all markers written --- PrepareAbort <+
      |
      +--> Ongoing (the next transaction)  /  Empty (InitProducerId)

Every change is first *prepared* (``prepare_*`` returns the target as a
``TxnTransitMetadata`` and marks the transition pending), then written to
``__transaction_state``, and only once that write is committed *completed*
(``complete_transition``). While a transition is pending, other requests for the id get
CONCURRENT_TRANSACTIONS, and a failed write leaves the state as it was. A Prepare state
is the decision: once written, the coordinator (this one or the next after a failover)
writes the markers until every partition has one. ``PrepareEpochFence`` is never
written: it is the pending state while an open transaction is aborted with a bumped
epoch, which fences the producer instance that had it open.

With transaction version 2 (KIP-890 part 2: EndTxn v5, a partition added by its leader
on the producer's first write there) the producer epoch moves on by one at every
transaction's end (``prepare_abort_or_commit``), and a transaction may be aborted with no
partition added (``PrepareAbort`` from ``Empty`` or a completed one).

No asyncio here: the coordinator drives persistence and time; tests drive this directly.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace

from kafkalite.topic_partition import TopicPartition

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
MAX_EPOCH = 32767  # Short.MaxValue


class TransactionState(enum.Enum):
    """Kafka's states; ``id`` is the byte stored in the transaction log."""

    EMPTY = (0, "Empty")
    ONGOING = (1, "Ongoing")
    PREPARE_COMMIT = (2, "PrepareCommit")
    PREPARE_ABORT = (3, "PrepareAbort")
    COMPLETE_COMMIT = (4, "CompleteCommit")
    COMPLETE_ABORT = (5, "CompleteAbort")
    DEAD = (6, "Dead")
    PREPARE_EPOCH_FENCE = (7, "PrepareEpochFence")

    def __init__(self, state_id: int, state_name: str) -> None:
        self.id = state_id
        self.state_name = state_name

    @classmethod
    def from_id(cls, state_id: int) -> TransactionState:
        for state in cls:
            if state.id == state_id:
                return state
        raise ValueError(f"unknown transaction state id {state_id}")

    @classmethod
    def from_name(cls, name: str) -> TransactionState | None:
        return next((s for s in cls if s.state_name == name), None)


S = TransactionState
VALID_PREVIOUS_STATES: dict[TransactionState, frozenset[TransactionState]] = {
    S.EMPTY: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.ONGOING: frozenset({S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.PREPARE_COMMIT: frozenset({S.ONGOING}),
    # transaction version 2 may abort with no partition added (from Empty or a completed one)
    S.PREPARE_ABORT: frozenset(
        {S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}
    ),
    S.COMPLETE_COMMIT: frozenset({S.PREPARE_COMMIT}),
    S.COMPLETE_ABORT: frozenset({S.PREPARE_ABORT}),
    S.DEAD: frozenset({S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT}),
    S.PREPARE_EPOCH_FENCE: frozenset({S.ONGOING}),
}


class IllegalTransitionError(RuntimeError):
    """A transition Kafka's state machine does not allow: a coordinator bug, never input."""


def is_epoch_exhausted(epoch: int) -> bool:
    return epoch >= MAX_EPOCH - 1


@dataclass(frozen=True, slots=True)
class TxnTransitMetadata:
    """The target of one transition, as written to the transaction log."""

    producer_id: int
    last_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    txn_timeout_ms: int
    txn_state: TransactionState
    topic_partitions: frozenset[TopicPartition]
    txn_start_timestamp: int
    txn_last_update_timestamp: int
    next_producer_id: int = NO_PRODUCER_ID
    """Transaction version 2: the producer id the transaction's end hands out, its epoch
    being exhausted (the epoch then starts again at 0)."""
    client_transaction_version: int = 0
    """2 when the producer runs transaction version 2 (KIP-890 part 2)."""


@dataclass(slots=True)
class TransactionMetadata:
    """Not thread-safe: owned by the coordinator's event loop."""

    transactional_id: str
    producer_id: int
    last_producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    last_producer_epoch: int = NO_PRODUCER_EPOCH
    txn_timeout_ms: int = 60_000
    state: TransactionState = S.EMPTY
    topic_partitions: set[TopicPartition] = field(default_factory=set)
    txn_start_timestamp: int = -1
    txn_last_update_timestamp: int = -1
    next_producer_id: int = NO_PRODUCER_ID
    client_transaction_version: int = 0
    pending_state: TransactionState | None = None
    has_failed_epoch_fence: bool = False
    """A fencing abort could not be written: its epoch was never given out, so the next
    attempt must not bump again (Kafka's rule, or epochs would leak)."""

    @property
    def pending_transition_in_progress(self) -> bool:
        return self.pending_state is not None

    @property
    def is_producer_epoch_exhausted(self) -> bool:
        return is_epoch_exhausted(self.producer_epoch)

    @classmethod
    def from_transit(
        cls, transactional_id: str, transit: TxnTransitMetadata
    ) -> TransactionMetadata:
        """Metadata as loaded from the log (a write is a completed transition)."""
        return cls(
            transactional_id,
            transit.producer_id,
            transit.last_producer_id,
            transit.producer_epoch,
            transit.last_producer_epoch,
            transit.txn_timeout_ms,
            transit.txn_state,
            set(transit.topic_partitions),
            transit.txn_start_timestamp,
            transit.txn_last_update_timestamp,
            transit.next_producer_id,
            transit.client_transaction_version,
        )

    def _current(self) -> TxnTransitMetadata:
        return TxnTransitMetadata(
            self.producer_id,
            self.last_producer_id,
            self.producer_epoch,
            self.last_producer_epoch,
            self.txn_timeout_ms,
            self.state,
            frozenset(self.topic_partitions),
            self.txn_start_timestamp,
            self.txn_last_update_timestamp,
            self.next_producer_id,
            self.client_transaction_version,
        )

    def _prepare(self, target: TxnTransitMetadata) -> TxnTransitMetadata:
        if self.pending_state is not None:
            raise IllegalTransitionError(
                f"{self.transactional_id}: {self.pending_state.state_name} is already pending"
            )
        if self.state not in VALID_PREVIOUS_STATES[target.txn_state]:
            raise IllegalTransitionError(
                f"{self.transactional_id}: {self.state.state_name} -> {target.txn_state.state_name}"
            )
        self.pending_state = target.txn_state
        return target

    # ---- the transitions (Kafka's prepare* methods) ------------------------------------

    def prepare_fence_producer_epoch(self) -> TxnTransitMetadata:
        """Bump the epoch of an open transaction so that it can be aborted with it."""
        bumped = self.producer_epoch if self.has_failed_epoch_fence else self.producer_epoch + 1
        return self._prepare(
            replace(
                self._current(),
                producer_epoch=bumped,
                last_producer_epoch=NO_PRODUCER_EPOCH,
                txn_state=S.PREPARE_EPOCH_FENCE,
            )
        )

    def adopt_fenced_epoch(self, epoch: int) -> None:
        """Make a prepared fence's epoch current, so that the abort that follows is
        written with it (Kafka sets it before the write; if the write fails, the epoch is
        remembered as never given out: ``has_failed_epoch_fence``)."""
        if self.pending_state != S.PREPARE_EPOCH_FENCE:
            raise IllegalTransitionError(f"{self.transactional_id}: no epoch fence pending")
        self.pending_state = None
        self.producer_epoch = epoch
        self.last_producer_epoch = NO_PRODUCER_EPOCH

    def prepare_increment_producer_epoch(
        self, new_timeout_ms: int, expected_epoch: int | None, now_ms: int
    ) -> TxnTransitMetadata | None:
        """InitProducerId for an idle id: the next epoch (KIP-360: a producer that names
        its current epoch bumps it; one that names the previous epoch is retrying a bump
        it never heard about). None: the named epoch is stale (PRODUCER_FENCED)."""
        if self.is_producer_epoch_exhausted:
            raise IllegalTransitionError(f"{self.transactional_id}: producer epoch exhausted")
        bumped = self.producer_epoch + 1
        if expected_epoch is None:
            epochs = (bumped, NO_PRODUCER_EPOCH)
        elif self.producer_epoch in (NO_PRODUCER_EPOCH, expected_epoch):
            epochs = (bumped, self.producer_epoch)
        elif expected_epoch == self.last_producer_epoch:
            epochs = (self.producer_epoch, self.last_producer_epoch)
        else:
            return None
        return self._prepare(
            replace(
                self._current(),
                producer_epoch=epochs[0],
                last_producer_epoch=epochs[1],
                txn_timeout_ms=new_timeout_ms,
                txn_state=S.EMPTY,
                topic_partitions=frozenset(),
                txn_start_timestamp=-1,
                txn_last_update_timestamp=now_ms,
            )
        )

    def prepare_producer_id_rotation(
        self, new_producer_id: int, new_timeout_ms: int, now_ms: int, record_last_epoch: bool
    ) -> TxnTransitMetadata:
        """The epoch is exhausted: a fresh producer id with epoch 0."""
        return self._prepare(
            replace(
                self._current(),
                producer_id=new_producer_id,
                last_producer_id=self.producer_id,
                producer_epoch=0,
                last_producer_epoch=self.producer_epoch if record_last_epoch else -1,
                txn_timeout_ms=new_timeout_ms,
                txn_state=S.EMPTY,
                topic_partitions=frozenset(),
                txn_start_timestamp=-1,
                txn_last_update_timestamp=now_ms,
            )
        )

    def prepare_add_partitions(
        self, added: set[TopicPartition], now_ms: int, client_transaction_version: int = 0
    ) -> TxnTransitMetadata:
        """The transaction starts (or grows): its start time is the first add."""
        starting = self.state in (S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT)
        return self._prepare(
            replace(
                self._current(),
                txn_state=S.ONGOING,
                topic_partitions=frozenset(added if starting else self.topic_partitions | added),
                txn_start_timestamp=now_ms if starting else self.txn_start_timestamp,
                txn_last_update_timestamp=now_ms,
                client_transaction_version=client_transaction_version,
            )
        )

    def prepare_abort_or_commit(
        self,
        target: TransactionState,
        now_ms: int,
        bump_epoch: bool = False,
        next_producer_id: int = NO_PRODUCER_ID,
        no_partition_added: bool = False,
    ) -> TxnTransitMetadata:
        """The decision. With transaction version 2 (``bump_epoch``) the producer epoch
        moves on by one here, so that the markers are written with the new epoch and
        anything the producer sent with the old one - a late retry, a zombie - is fenced
        on every partition; an exhausted epoch also names the producer id that follows
        (``next_producer_id``). A transaction aborted with no partition added starts now."""
        current = self._current()
        return self._prepare(
            replace(
                current,
                txn_state=target,
                txn_last_update_timestamp=now_ms,
                txn_start_timestamp=now_ms if no_partition_added else current.txn_start_timestamp,
                producer_epoch=self.producer_epoch + 1 if bump_epoch else self.producer_epoch,
                last_producer_epoch=self.producer_epoch if bump_epoch else self.last_producer_epoch,
                next_producer_id=next_producer_id,
                client_transaction_version=2 if bump_epoch else self.client_transaction_version,
            )
        )

    def prepare_complete(self, now_ms: int) -> TxnTransitMetadata:
        """Every marker is written: the transaction is over and holds no partitions. A
        producer id named to follow an exhausted epoch takes over, at epoch 0."""
        target = S.COMPLETE_COMMIT if self.state == S.PREPARE_COMMIT else S.COMPLETE_ABORT
        self.has_failed_epoch_fence = False
        rotated = self.next_producer_id != NO_PRODUCER_ID
        return self._prepare(
            replace(
                self._current(),
                txn_state=target,
                topic_partitions=frozenset(),
                txn_last_update_timestamp=now_ms,
                producer_id=self.next_producer_id if rotated else self.producer_id,
                last_producer_id=self.producer_id if rotated else self.last_producer_id,
                producer_epoch=0 if rotated else self.producer_epoch,
                next_producer_id=NO_PRODUCER_ID,
            )
        )

    # ---- after the write ------------------------------------------------------------------

    def complete_transition(self, transit: TxnTransitMetadata) -> None:
        """The write of ``transit`` is committed: make it the state."""
        if self.pending_state != transit.txn_state:
            raise IllegalTransitionError(
                f"{self.transactional_id}: completing {transit.txn_state.state_name} while "
                f"{self.pending_state.state_name if self.pending_state else 'nothing'} is pending"
            )
        self.producer_id = transit.producer_id
        self.last_producer_id = transit.last_producer_id
        self.producer_epoch = transit.producer_epoch
        self.last_producer_epoch = transit.last_producer_epoch
        self.txn_timeout_ms = transit.txn_timeout_ms
        self.state = transit.txn_state
        self.topic_partitions = set(transit.topic_partitions)
        self.txn_start_timestamp = transit.txn_start_timestamp
        self.txn_last_update_timestamp = transit.txn_last_update_timestamp
        self.next_producer_id = transit.next_producer_id
        self.client_transaction_version = transit.client_transaction_version
        self.pending_state = None

    def abort_pending(self) -> None:
        """The write failed: nothing changed."""
        self.pending_state = None
