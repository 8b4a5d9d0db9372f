"""TxnOffsetCommit: a transactional producer commits its consumer group's offsets inside
its transaction (``send_offsets_to_transaction``). The group coordinator writes them at
once but they count only when the transaction commits (``coordinator.group.txn_offsets``).

The group's ``__consumer_offsets`` partition must be in the transaction, or its offsets
would never get a marker. Before v5 the producer adds it (AddOffsetsToTxn) and, with
``transaction.partition.verification.enable``, the group coordinator verifies that with the
transaction coordinator before it writes, as a partition leader verifies a transactional
batch (KIP-890 part 1); from v5 (transaction version 2) the group coordinator adds it for
the producer. Either is asked only before the producer's transaction first writes there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.data_plane.handlers.transactions import fenced_for
from kafkalite.broker.data_plane.replica_manager import ReplicaManager
from kafkalite.broker.data_plane.transaction_verification import (
    RETRIABLE,
    TransactionVerifier,
    transaction_ongoing,
)
from kafkalite.broker.handler_registry import api
from kafkalite.coordinator.group.coordinator import GroupCoordinator
from kafkalite.coordinator.group.offsets_log import OFFSETS_TOPIC, CommittedOffset
from kafkalite.metadata.image import MetadataImage
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.errors import ErrorCode, KafkaError

TRANSACTION_V2_VERSION = 5
"""TxnOffsetCommit v5: the group coordinator adds the offsets partition to the transaction."""
TRANSACTION_ABORTABLE_VERSION = 4


class TxnOffsetCommitApi:
    """Served by the group coordinator, which asks the transaction coordinator through the
    verifier whether (or that) its partition is in the producer's transaction."""

    def __init__(
        self,
        coordinator: GroupCoordinator,
        replicas: ReplicaManager,
        verifier: TransactionVerifier,
        image: MetadataImage,
        now_ms: Callable[[], int],
    ) -> None:
        self._coordinator = coordinator
        self._replicas = replicas
        self._verifier = verifier
        self._image = image
        self._now_ms = now_ms

    async def _in_transaction(self, ctx: RequestContext, request: Any) -> None:
        """Verify (before v5, if verification is on) or add (v5) the group's offsets
        partition in the producer's transaction; raises KafkaError if it is not there.
        The commit's write follows with no wait in between, so the guard checked last
        still holds when it is written."""
        add = ctx.version >= TRANSACTION_V2_VERSION
        verifier = self._verifier
        if not (add or verifier.enabled()):
            return
        partition = self._coordinator.check_coordinator(request.group_id)
        producer_id, epoch = int(request.producer_id), int(request.producer_epoch)
        log = self._replicas.get_partition(OFFSETS_TOPIC, partition).log
        if transaction_ongoing(log.producer_state, producer_id, epoch):
            return
        tp = (OFFSETS_TOPIC, partition)
        token = verifier.guards.start(tp, producer_id)
        if add:
            image = self._image
            verdicts = await verifier.add(
                request.transactional_id,
                producer_id,
                epoch,
                {tp},
                image.broker_int("add.partitions.to.txn.retry.backoff.ms") / 1000,
                image.broker_int("add.partitions.to.txn.retry.backoff.max.ms") / 1000,
            )
        else:
            verdicts = await verifier.verify(request.transactional_id, producer_id, epoch, {tp})
        error = verdicts.get(tp, ErrorCode.unknown_server_error)
        if error != ErrorCode.none:
            raise KafkaError(_refusal(ctx.version, error))
        if not verifier.guards.holds(tp, producer_id, token):
            # its transaction ended on the partition while the coordinator answered
            raise KafkaError(_refusal(ctx.version, ErrorCode.invalid_txn_state))

    @api(ApiKeys.TXN_OFFSET_COMMIT, 0, 5)
    async def txn_offset_commit(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        now = self._now_ms()
        offsets = {
            (t.name, int(p.partition_index)): CommittedOffset(
                int(p.committed_offset),
                int(getattr(p, "committed_leader_epoch", -1)),
                p.committed_metadata,
                now,
            )
            for t in request.topics
            for p in t.partitions
        }
        try:
            await self._in_transaction(ctx, request)
            await self._coordinator.commit_transactional(
                request.group_id,
                int(request.producer_id),
                int(request.producer_epoch),
                int(getattr(request, "generation_id", -1)),
                getattr(request, "member_id", ""),
                offsets,
            )
            error = ErrorCode.none
        except KafkaError as exc:
            error = fenced_for(ctx.version, 3, _as_producer_error(exc.code))
        return s.TxnOffsetCommitResponse(
            throttle_time=0,
            topics=tuple(
                s.TxnOffsetCommitResponseTopic(
                    name=t.name,
                    partitions=tuple(
                        s.TxnOffsetCommitResponsePartition(
                            partition_index=p.partition_index, error_code=error
                        )
                        for p in t.partitions
                    ),
                )
                for t in request.topics
            ),
        )


def _refusal(version: int, error: ErrorCode) -> ErrorCode:
    """Why the offsets partition is not in the transaction, as the client understands it:
    not added (TRANSACTION_ABORTABLE from v4, INVALID_TXN_STATE before), the transaction
    coordinator busy or away (retried: COORDINATOR_LOAD_IN_PROGRESS; v5's producer is told
    CONCURRENT_TRANSACTIONS as it is), or fenced."""
    if error == ErrorCode.concurrent_transactions and version >= TRANSACTION_V2_VERSION:
        return error
    if error in RETRIABLE:
        return ErrorCode.coordinator_load_in_progress
    if error in (ErrorCode.transaction_abortable, ErrorCode.invalid_txn_state):
        abortable = version >= TRANSACTION_ABORTABLE_VERSION
        return ErrorCode.transaction_abortable if abortable else ErrorCode.invalid_txn_state
    return error


def _as_producer_error(code: ErrorCode) -> ErrorCode:
    """The log refuses a batch from an older producer epoch as INVALID_PRODUCER_EPOCH;
    to a transactional producer that means it was fenced."""
    return ErrorCode.producer_fenced if code == ErrorCode.invalid_producer_epoch else code
