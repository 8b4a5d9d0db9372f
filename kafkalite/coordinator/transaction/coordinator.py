"""The transaction coordinator: drives ``TransactionMetadata`` with persistence and time.

Each transactional id belongs to one partition of ``__transaction_state``; the broker that
leads that partition is its coordinator, and its *coordinator epoch* is that partition's
leader epoch. Every transition is written there (acks=all) before it takes effect and
before the client hears of it, so a new coordinator - after a failover, or this broker
leading the partition again in a later epoch - rebuilds exactly the decided state by
replaying the partition to its log end. It then finishes what was decided: for a
transaction in PrepareCommit or PrepareAbort it writes the markers again, on every
partition, until all are written, and then CompleteCommit/CompleteAbort.

A ticker loads partitions as soon as this broker leads them (not only on the next
request: a decided transaction must complete even if its producer is gone) and aborts
transactions that outlive their ``transaction.timeout.ms``. One asyncio task (the
broker's loop) owns all of it; the pure rules are in ``operations`` and ``state``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from kafkalite.coordinator.chunked_load import ChunkedLoad
from kafkalite.coordinator.partition_loads import LogChunk, PartitionLoads
from kafkalite.coordinator.partitioning import partition_for
from kafkalite.coordinator.transaction import operations
from kafkalite.coordinator.transaction.markers import (
    MarkerChannel,
    MarkerOutcome,
    TxnMarkerEntry,
    write_markers,
)
from kafkalite.coordinator.transaction.operations import ProducerIdAndEpoch
from kafkalite.coordinator.transaction.state import (
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
)
from kafkalite.coordinator.transaction.transaction_log import (
    TransactionStateTopic,
    replay,
    transition_record,
)
from kafkalite.events import EventSink, EventType
from kafkalite.protocol.errors import ErrorCode, KafkaError
from kafkalite.supervision import Spawn
from kafkalite.ticks import Ticker
from kafkalite.topic_partition import TopicPartition

log = logging.getLogger(__name__)
S = TransactionState
IDLE_STATES = frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT, S.DEAD})
"""No timeout runs and no marker is owed in these states."""
TICK_S = 0.1
"""How often timeouts are checked while some transaction is in flight."""
IDLE_TICK_S = 1.0
"""How often otherwise: a change of leadership or a transaction's start wakes it at once."""
RETRY_S = 0.2

# How a failed write to the transaction log is reported (Kafka's appendTransactionToLog).
_APPEND_ERRORS = {
    ErrorCode.unknown_topic_or_partition: ErrorCode.coordinator_not_available,
    ErrorCode.not_enough_replicas: ErrorCode.coordinator_not_available,
    ErrorCode.not_enough_replicas_after_append: ErrorCode.coordinator_not_available,
    ErrorCode.request_timed_out: ErrorCode.coordinator_not_available,
    ErrorCode.not_leader_or_follower: ErrorCode.not_coordinator,
    ErrorCode.kafka_storage_error: ErrorCode.not_coordinator,
    ErrorCode.message_too_large: ErrorCode.unknown_server_error,
    ErrorCode.record_list_too_large: ErrorCode.unknown_server_error,
}
# Failures after which the record may still be in this leader's log (and so be committed)
_MAYBE_WRITTEN = frozenset(
    {
        ErrorCode.request_timed_out,
        ErrorCode.not_enough_replicas_after_append,
    }
)


LOAD_BUFFER_BYTES = 64 * 1024
"""How much of the log a load replays before it yields to the loop (Kafka's
``transaction.state.log.load.buffer.size`` is 5 MiB; Python decodes far slower)."""


@dataclass(frozen=True, slots=True)
class TransactionConfig:
    max_timeout_ms: Callable[[], int]  # transaction.max.timeout.ms
    abort_interval_ms: Callable[[], int]  # transaction.abort.timed.out.transaction.cleanup...
    load_buffer_bytes: int = LOAD_BUFFER_BYTES


@dataclass(frozen=True, slots=True)
class EndTxnResult:
    """EndTxn's answer; with transaction version 2, the producer id and epoch the producer
    goes on with (the epoch bumped, or a new id at epoch 0 when it was exhausted)."""

    error: ErrorCode
    producer_id: int = -1
    producer_epoch: int = -1


@dataclass(frozen=True, slots=True)
class InitProducerIdResult:
    error: ErrorCode
    producer_id: int = -1
    producer_epoch: int = -1


class TransactionCoordinator:
    def __init__(
        self,
        topic: TransactionStateTopic,
        channel: MarkerChannel,
        next_producer_id: Callable[[], Awaitable[int]],
        now_ms: Callable[[], int],
        emit: EventSink,
        config: TransactionConfig,
    ) -> None:
        self.topic = topic
        self.channel = channel
        self.next_producer_id = next_producer_id
        self.now_ms = now_ms
        self.emit = emit
        self.config = config
        self.transactions: dict[str, TransactionMetadata] = {}
        self.loads = PartitionLoads()
        self._marker_tasks: dict[str, asyncio.Task[None]] = {}
        self.pending_markers: dict[str, set[TopicPartition]] = {}
        """Per decided transaction, the partitions whose marker is not written yet."""
        self._background: set[asyncio.Task[Any]] = set()
        self._ticker: asyncio.Task[None] | None = None
        self._ticks = Ticker()

    def start(self, spawn: Spawn) -> None:
        self._ticker = spawn(self._tick_forever(), "txn-coordinator")

    async def stop(self) -> None:
        tasks = [t for t in (self._ticker, *self._marker_tasks.values(), *self._background) if t]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # ---- ownership and loading ---------------------------------------------------------

    def partition_of(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self.topic.partition_count())

    def coordinator_epoch(self, transactional_id: str) -> int:
        """The epoch this broker coordinates the id in (-1 if it does not, or not yet)."""
        epoch = self.loads.loaded_epoch(self.partition_of(transactional_id))
        return -1 if epoch is None else epoch

    def check_coordinator(self, transactional_id: str) -> tuple[int, int]:
        """``(partition, coordinator epoch)`` of the id, loaded; NOT_COORDINATOR if not
        ours, COORDINATOR_LOAD_IN_PROGRESS while its partition is being loaded."""
        partition = self.partition_of(transactional_id)
        return partition, self._ensure_loaded(partition)

    def is_loading(self) -> bool:
        """Some partition is still being loaded (ListTransactions cannot list it all)."""
        return self.loads.any_loading()

    def _ensure_loaded(self, partition: int) -> int:
        epoch = self.topic.leader_epoch(partition)
        if epoch is None:
            if partition in self.loads.owned():
                self._forget(partition)
            raise KafkaError(ErrorCode.not_coordinator)
        if self.loads.needs_loading(partition, epoch):
            self._forget(partition)
            self._begin_loading(partition, epoch)
        error = self.loads.error_for(partition, epoch)
        if error != ErrorCode.none:
            raise KafkaError(error)
        return epoch

    def _forget(self, partition: int) -> None:
        """Resign: drop the partition's ids and stop writing their markers (a load in
        progress sees it is superseded and stops)."""
        self.loads.resign(partition)
        for txn_id in [t for t in self.transactions if self.partition_of(t) == partition]:
            del self.transactions[txn_id]
            task = self._marker_tasks.pop(txn_id, None)
            if task is not None:
                task.cancel()

    def _begin_loading(self, partition: int, epoch: int) -> None:
        """Replay the partition to its log end in chunks (``chunked_load``): the ids it
        holds are served once all of it is replayed, not before."""
        loaded: dict[str, TransactionMetadata] = {}

        def replay_chunk(chunk: LogChunk) -> None:
            records = [r for header, rs in chunk.batches if not header.is_control for r in rs]
            skipped = replay(loaded, records)
            if skipped:
                log.warning("skipped %d unreadable records of partition %d", skipped, partition)

        load = ChunkedLoad(
            self.loads,
            partition,
            epoch,
            lambda offset: self.topic.read_chunk(partition, offset, self.config.load_buffer_bytes),
            replay_chunk,
            lambda: self.topic.leader_epoch(partition) == epoch,
            lambda: self._complete_loading(partition, epoch, loaded),
            lambda: self._forget(partition),
        )
        try:
            task = load.begin()
        except KafkaError:
            self._forget(partition)
            raise
        if task is not None:
            self.emit(EventType.TXN_PARTITION_LOADING, partition=partition, coordinator_epoch=epoch)
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    def _complete_loading(
        self, partition: int, epoch: int, loaded: dict[str, TransactionMetadata]
    ) -> None:
        """Serve the partition's ids, and resume the markers of every decided transaction."""
        self.transactions.update(loaded)
        self.emit(
            EventType.TXN_PARTITION_LOADED,
            partition=partition,
            coordinator_epoch=epoch,
            transactions=len(loaded),
        )
        for txn_id, md in loaded.items():
            if md.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
                self._send_markers(txn_id, epoch, md)

    def _maybe_load_led_partitions(self) -> None:
        """Load what this broker has come to lead; forget what it no longer leads."""
        led = set(self.topic.led_partitions())
        for partition in [p for p in self.loads.owned() if p not in led]:
            self._forget(partition)
        for partition in led:
            with contextlib.suppress(KafkaError):
                self._ensure_loaded(partition)

    def _still_in_charge(self, txn_id: str, epoch: int, md: TransactionMetadata) -> bool:
        partition = self.partition_of(txn_id)
        return (
            self.loads.loaded_epoch(partition) == epoch
            and self.topic.leader_epoch(partition) == epoch
            and self.transactions.get(txn_id) is md
        )

    # ---- writing transitions ------------------------------------------------------------

    async def _append_transition(
        self, txn_id: str, epoch: int, md: TransactionMetadata, transit: TxnTransitMetadata
    ) -> ErrorCode:
        """Write ``transit``; once committed, apply it. On failure nothing changes (if the
        record may still be committed, the partition is reloaded from the log)."""
        partition = self.partition_of(txn_id)
        error = ErrorCode.none
        try:
            await self.topic.append(partition, [transition_record(txn_id, transit)])
        except KafkaError as exc:
            error = exc.code
        if not self._still_in_charge(txn_id, epoch, md):
            return ErrorCode.not_coordinator
        if error != ErrorCode.none:
            md.abort_pending()
            if error in _MAYBE_WRITTEN:
                self._forget(partition)  # memory must follow the log: reload on next use
            return _APPEND_ERRORS.get(error, error)
        md.complete_transition(transit)
        return ErrorCode.none

    # ---- InitProducerId ----------------------------------------------------------------

    async def handle_init_producer_id(
        self,
        txn_id: str,
        timeout_ms: int,
        expected: ProducerIdAndEpoch | None,
    ) -> InitProducerIdResult:
        for check in (
            operations.check_transactional_id(txn_id),
            operations.check_timeout(timeout_ms, self.config.max_timeout_ms()),
        ):
            if check != ErrorCode.none:
                return InitProducerIdResult(check)
        try:
            self.check_coordinator(txn_id)
            if txn_id not in self.transactions:
                producer_id = await self.next_producer_id()
                _, epoch = self.check_coordinator(txn_id)  # after the await: still ours?
                self.transactions.setdefault(txn_id, TransactionMetadata(txn_id, producer_id))
            rotation = None
            if operations.needs_new_producer_id(self.transactions[txn_id], expected):
                rotation = await self.next_producer_id()
            _, epoch = self.check_coordinator(txn_id)
        except KafkaError as exc:
            return InitProducerIdResult(exc.code)
        md = self.transactions[txn_id]
        previous_epoch = md.producer_epoch
        decision = operations.init_producer_id(md, timeout_ms, expected, self.now_ms(), rotation)
        if isinstance(decision, ErrorCode):
            return InitProducerIdResult(decision)
        if decision.txn_state == S.PREPARE_EPOCH_FENCE:
            self._emit_fenced(txn_id, md.producer_id, previous_epoch, decision.producer_epoch)
            ended = await self._end_transaction(
                txn_id, md.producer_id, decision.producer_epoch, False, from_client=False
            )
            return InitProducerIdResult(
                ErrorCode.concurrent_transactions if ended.error == ErrorCode.none else ended.error
            )
        error = await self._append_transition(txn_id, epoch, md, decision)
        if error != ErrorCode.none:
            return InitProducerIdResult(error)
        if expected is None and previous_epoch >= 0:
            self._emit_fenced(txn_id, md.producer_id, previous_epoch, md.producer_epoch)
        return InitProducerIdResult(ErrorCode.none, md.producer_id, md.producer_epoch)

    def _emit_fenced(self, txn_id: str, producer_id: int, old: int, new: int) -> None:
        self.emit(
            EventType.PRODUCER_FENCED,
            transactional_id=txn_id,
            producer_id=producer_id,
            fenced_epoch=old,
            producer_epoch=new,
        )

    # ---- AddPartitionsToTxn / AddOffsetsToTxn ------------------------------------------

    async def handle_add_partitions(
        self,
        txn_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: set[TopicPartition],
        client_transaction_version: int = 0,
    ) -> ErrorCode:
        """AddPartitionsToTxn and AddOffsetsToTxn; with ``client_transaction_version`` 2,
        a partition leader (or the group coordinator) adding a partition on the producer's
        behalf, the producer's first write there being its request (KIP-890 part 2)."""
        if operations.check_transactional_id(txn_id) != ErrorCode.none:
            return ErrorCode.invalid_request
        try:
            _, epoch = self.check_coordinator(txn_id)
        except KafkaError as exc:
            return exc.code
        md = self.transactions.get(txn_id)
        starting = md is not None and md.state != S.ONGOING
        decision = operations.add_partitions(
            md, producer_id, producer_epoch, partitions, self.now_ms(), client_transaction_version
        )
        if isinstance(decision, ErrorCode):
            return decision
        assert md is not None
        error = await self._append_transition(txn_id, epoch, md, decision)
        if error == ErrorCode.none and starting:
            self.wake()  # its timeout runs from now
            self.emit(
                EventType.TXN_STARTED,
                transactional_id=txn_id,
                producer_id=md.producer_id,
                producer_epoch=md.producer_epoch,
                partitions=_names(md.topic_partitions),
            )
        return error

    def handle_verify_partitions(
        self, txn_id: str, producer_id: int, producer_epoch: int, partitions: set[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]:
        """A partition leader asks whether ``partitions`` are in the producer's ongoing
        transaction before it appends its transactional batch (KIP-890's verification).
        Reads only: nothing is written."""
        if operations.check_transactional_id(txn_id) != ErrorCode.none:
            return dict.fromkeys(partitions, ErrorCode.invalid_request)
        try:
            self.check_coordinator(txn_id)
        except KafkaError as exc:
            return dict.fromkeys(partitions, exc.code)
        verdict = operations.verify_partitions(
            self.transactions.get(txn_id), producer_id, producer_epoch, partitions
        )
        return dict.fromkeys(partitions, verdict) if isinstance(verdict, ErrorCode) else verdict

    # ---- EndTxn, and the markers that follow --------------------------------------------

    async def handle_end_transaction(
        self,
        txn_id: str,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        transaction_version: int = 1,
    ) -> EndTxnResult:
        """EndTxn; ``transaction_version`` 2 (EndTxn v5) bumps the producer epoch."""
        if operations.check_transactional_id(txn_id) != ErrorCode.none:
            return EndTxnResult(ErrorCode.invalid_request)
        return await self._end_transaction(
            txn_id, producer_id, producer_epoch, commit, True, transaction_version >= 2
        )

    async def _end_transaction(
        self,
        txn_id: str,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        from_client: bool,
        epoch_bump: bool | None = None,
    ) -> EndTxnResult:
        """The decision, written, then the markers. ``epoch_bump`` None (a timeout, a
        fence): as the transaction's producer runs it (its client transaction version)."""
        try:
            _, epoch = self.check_coordinator(txn_id)
            md = self.transactions.get(txn_id)
            if epoch_bump is None:
                epoch_bump = md is not None and md.client_transaction_version >= 2
            next_producer_id = -1
            if (
                epoch_bump
                and md is not None
                and md.is_producer_epoch_exhausted
                and md.pending_state != S.PREPARE_EPOCH_FENCE  # a fence does not bump
            ):
                next_producer_id = await self.next_producer_id()
                _, epoch = self.check_coordinator(txn_id)  # after the await: still ours?
                md = self.transactions.get(txn_id)
        except KafkaError as exc:
            return EndTxnResult(exc.code)
        fencing = md is not None and md.pending_state == S.PREPARE_EPOCH_FENCE
        now = self.now_ms()
        decision = (
            operations.end_transaction_v2(
                md, producer_id, producer_epoch, commit, now, from_client, next_producer_id
            )
            if epoch_bump
            else operations.end_transaction(
                md, producer_id, producer_epoch, commit, now, from_client
            )
        )
        if isinstance(decision, ErrorCode):
            if fencing and md is not None and not from_client:
                md.abort_pending()  # the fence is not going to be written
            if decision == ErrorCode.none and md is not None:  # a retry of what ended so
                return EndTxnResult(decision, md.producer_id, md.producer_epoch)
            return EndTxnResult(decision)
        assert md is not None
        error = await self._append_transition(txn_id, epoch, md, decision)
        if error != ErrorCode.none:
            if fencing and self.transactions.get(txn_id) is md:
                md.has_failed_epoch_fence = True
            return EndTxnResult(error)
        self.emit(
            EventType.TXN_PREPARE_COMMIT if commit else EventType.TXN_PREPARE_ABORT,
            transactional_id=txn_id,
            producer_id=md.producer_id,
            producer_epoch=md.producer_epoch,
            partitions=_names(md.topic_partitions),
        )
        self._send_markers(txn_id, epoch, md)
        if md.next_producer_id >= 0:  # the epoch was exhausted: a new id, from epoch 0
            return EndTxnResult(ErrorCode.none, md.next_producer_id, 0)
        return EndTxnResult(ErrorCode.none, md.producer_id, md.producer_epoch)

    def _send_markers(self, txn_id: str, epoch: int, md: TransactionMetadata) -> None:
        previous = self._marker_tasks.pop(txn_id, None)
        if previous is not None:
            previous.cancel()
        task = asyncio.create_task(self._complete_transaction(txn_id, epoch, md))
        self._marker_tasks[txn_id] = task
        task.add_done_callback(lambda t: self._forget_marker_task(txn_id, t))

    def _forget_marker_task(self, txn_id: str, task: asyncio.Task[None]) -> None:
        if self._marker_tasks.get(txn_id) is task:
            del self._marker_tasks[txn_id]
            self.pending_markers.pop(txn_id, None)
        if not task.cancelled() and task.exception() is not None:
            log.error("markers of %s failed", txn_id, exc_info=task.exception())

    async def _complete_transaction(self, txn_id: str, epoch: int, md: TransactionMetadata) -> None:
        """Write every marker, then CompleteCommit/CompleteAbort (retried while in charge)."""
        committed = md.state == S.PREPARE_COMMIT
        marker = TxnMarkerEntry(
            md.producer_id, md.producer_epoch, epoch, committed, frozenset(md.topic_partitions)
        )
        pending = self.pending_markers[txn_id] = set()
        outcome = await write_markers(
            self.channel,
            marker,
            lambda: self._still_in_charge(txn_id, epoch, md),
            pending=pending,
        )
        if outcome == MarkerOutcome.SUPERSEDED:
            return
        self.emit(
            EventType.MARKERS_WRITTEN,
            transactional_id=txn_id,
            producer_id=marker.producer_id,
            producer_epoch=marker.producer_epoch,
            result="commit" if committed else "abort",
            partitions=_names(marker.partitions),
        )
        while self._still_in_charge(txn_id, epoch, md):
            if md.pending_transition_in_progress:
                await asyncio.sleep(RETRY_S)
                continue
            transit = md.prepare_complete(self.now_ms())
            error = await self._append_transition(txn_id, epoch, md, transit)
            if error == ErrorCode.none:
                self.emit(
                    EventType.TXN_COMMITTED if committed else EventType.TXN_ABORTED,
                    transactional_id=txn_id,
                    producer_id=md.producer_id,
                    producer_epoch=md.producer_epoch,
                    partitions=_names(marker.partitions),
                )
                return
            await asyncio.sleep(RETRY_S)

    # ---- timeouts --------------------------------------------------------------------------

    async def _tick_forever(self) -> None:
        last_abort_check = 0
        while True:
            await self._ticks.sleep(TICK_S if self.watching() else IDLE_TICK_S)
            self._maybe_load_led_partitions()
            now = self.now_ms()
            if now - last_abort_check >= self.config.abort_interval_ms():
                last_abort_check = now
                self._abort_timed_out_transactions(now)

    def watching(self) -> bool:
        """A transaction is in flight (its timeout runs) or a partition is loading."""
        return self.loads.any_loading() or any(
            md.state not in IDLE_STATES or md.pending_transition_in_progress
            for md in self.transactions.values()
        )

    def wake(self) -> None:
        """Check now: partition leaderships changed (load what this broker has come to
        lead), or a transaction started (its timeout runs from now)."""
        self._ticks.wake()

    def _abort_timed_out_transactions(self, now_ms: int) -> None:
        """Ongoing for longer than its timeout: fence the producer's epoch and abort."""
        for txn_id, md in list(self.transactions.items()):
            if (
                md.state != S.ONGOING
                or md.pending_transition_in_progress
                or now_ms <= md.txn_start_timestamp + md.txn_timeout_ms
            ):
                continue
            fence = md.prepare_fence_producer_epoch()
            self.emit(
                EventType.TXN_TIMED_OUT,
                transactional_id=txn_id,
                producer_id=md.producer_id,
                producer_epoch=md.producer_epoch,
                timeout_ms=md.txn_timeout_ms,
            )
            task = asyncio.create_task(
                self._end_transaction(txn_id, md.producer_id, fence.producer_epoch, False, False)
            )
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    # ---- ListTransactions / DescribeTransactions ----------------------------------------

    def loaded_transactions(self) -> list[TransactionMetadata]:
        """Every transactional id this broker coordinates now."""
        self._maybe_load_led_partitions()
        return sorted(self.transactions.values(), key=lambda md: md.transactional_id)

    def describe(self, txn_id: str) -> TransactionMetadata:
        """The id's state; KafkaError NOT_COORDINATOR / TRANSACTIONAL_ID_NOT_FOUND."""
        if not txn_id:
            raise KafkaError(ErrorCode.invalid_request)
        self.check_coordinator(txn_id)
        md = self.transactions.get(txn_id)
        if md is None or md.state == S.DEAD or md.producer_epoch < 0:
            raise KafkaError(ErrorCode.transactional_id_not_found)
        return md


def _names(partitions: set[TopicPartition] | frozenset[TopicPartition]) -> list[str]:
    return [f"{t}-{p}" for t, p in sorted(partitions)]
