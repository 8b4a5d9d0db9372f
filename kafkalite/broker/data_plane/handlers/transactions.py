"""AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, ListTransactions, DescribeTransactions.

The requests a transactional producer (and an admin client) sends to its transaction
coordinator. The logic lives in ``coordinator.transaction``; these handlers only
translate between kio's versioned messages and it. (InitProducerId is in ``producers``,
FindCoordinator in ``groups``, WriteTxnMarkers and TxnOffsetCommit in their own modules.)

PRODUCER_FENCED exists since Kafka 2.7; a client speaking an older version of a request is
told INVALID_PRODUCER_EPOCH instead, as Kafka does. The KIP-890 versions that only add an
error code the client understands (TRANSACTION_ABORTABLE: AddOffsetsToTxn v4, EndTxn v4,
InitProducerId v5, TxnOffsetCommit v4) are the same requests as the versions before.
AddPartitionsToTxn v4+ is what a partition leader sends its transaction coordinator to
verify a transactional batch (``broker.transaction_verification``), or, for a producer of
transaction version 2, to add the partition to its transaction. EndTxn v5 is transaction
version 2 (KIP-890 part 2): the producer epoch moves on at each transaction's end.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.data_plane.internal_topic import InternalTopic
from kafkalite.broker.handler_registry import api
from kafkalite.coordinator.group.offsets_log import OFFSETS_TOPIC
from kafkalite.coordinator.partitioning import partition_for
from kafkalite.coordinator.transaction.coordinator import TransactionCoordinator
from kafkalite.coordinator.transaction.state import TransactionState
from kafkalite.metadata.image import MetadataImage
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.errors import ErrorCode, KafkaError
from kafkalite.topic_partition import TopicPartition

BROKER_BATCH_VERSION = 4
"""AddPartitionsToTxn v4+ is sent by partition leaders, in batches (KIP-890)."""
END_TXN_V2_VERSION = 5
TRANSACTION_VERSION_2 = 2
"""KIP-890 part 2: a partition joins the transaction with the producer's first write
there, and the producer epoch moves on at every transaction's end."""


def fenced_for(version: int, first_version_with_fenced: int, error: ErrorCode) -> ErrorCode:
    """PRODUCER_FENCED as an older request version knows it."""
    if error == ErrorCode.producer_fenced and version < first_version_with_fenced:
        return ErrorCode.invalid_producer_epoch
    return error


class TransactionApis:
    """Served by the transaction coordinator; partitions are checked against the
    metadata image, and a group's offsets partition is found through its topic."""

    def __init__(
        self,
        coordinator: TransactionCoordinator,
        image: MetadataImage,
        offsets_topic: InternalTopic,
        now_ms: Callable[[], int],
    ) -> None:
        self._coordinator = coordinator
        self._image = image
        self._offsets_topic = offsets_topic
        self._now_ms = now_ms

    async def _add_partitions(
        self,
        txn_id: str,
        producer_id: int,
        producer_epoch: int,
        wanted: list[TopicPartition],
        first_version_with_fenced: int,
        version: int,
        client_transaction_version: int = 0,
    ) -> dict[TopicPartition, ErrorCode]:
        """Unknown topics fail alone (UNKNOWN_TOPIC_OR_PARTITION), the others are not
        attempted (OPERATION_NOT_ATTEMPTED): nothing is added unless all can be."""
        image = self._image
        unknown = {
            (topic, index)
            for topic, index in wanted
            if (found := image.topic(topic)) is None or index not in found.partitions
        }
        if unknown:
            return {
                tp: ErrorCode.unknown_topic_or_partition
                if tp in unknown
                else (ErrorCode.operation_not_attempted)
                for tp in wanted
            }
        error = await self._coordinator.handle_add_partitions(
            txn_id, producer_id, producer_epoch, set(wanted), client_transaction_version
        )
        return dict.fromkeys(wanted, fenced_for(version, first_version_with_fenced, error))

    @api(ApiKeys.ADD_PARTITIONS_TO_TXN, 0, 5)
    async def add_partitions_to_txn(self, ctx: RequestContext, request: Any) -> Any:
        """v0-3: a producer adds partitions to its transaction. v4+ (KIP-890), sent by
        partition leaders: a batch of transactions, each either added to or, with
        ``verify_only``, only checked (is the partition in the ongoing transaction?)."""
        s = ctx.schema
        if ctx.version < BROKER_BATCH_VERSION:
            errors = await self._add_partitions(
                request.v3_and_below_transactional_id,
                int(request.v3_and_below_producer_id),
                int(request.v3_and_below_producer_epoch),
                [(t.name, int(p)) for t in request.v3_and_below_topics for p in t.partitions],
                2,
                ctx.version,
            )
            return s.AddPartitionsToTxnResponse(
                throttle_time=0, results_by_topic_v3_and_below=_topic_results(s, errors)
            )
        results = []
        for txn in request.transactions:
            wanted = [(t.name, int(p)) for t in txn.topics for p in t.partitions]
            if txn.verify_only:
                errors = self._coordinator.handle_verify_partitions(
                    txn.transactional_id,
                    int(txn.producer_id),
                    int(txn.producer_epoch),
                    set(wanted),
                )
            else:  # a leader adds the partition for its producer (transaction version 2)
                errors = await self._add_partitions(
                    txn.transactional_id,
                    int(txn.producer_id),
                    int(txn.producer_epoch),
                    wanted,
                    2,
                    ctx.version,
                    TRANSACTION_VERSION_2,
                )
            results.append(
                s.AddPartitionsToTxnResult(
                    transactional_id=txn.transactional_id, topic_results=_topic_results(s, errors)
                )
            )
        return s.AddPartitionsToTxnResponse(
            throttle_time=0, error_code=ErrorCode.none, results_by_transaction=tuple(results)
        )

    @api(ApiKeys.ADD_OFFSETS_TO_TXN, 0, 4)
    async def add_offsets_to_txn(self, ctx: RequestContext, request: Any) -> Any:
        """The group's ``__consumer_offsets`` partition joins the transaction, so that the
        offsets the producer commits there (TxnOffsetCommit) get its marker too."""
        if not request.group_id:
            error = ErrorCode.invalid_group_id
        else:
            await self._offsets_topic.ensure_exists()
            partition = partition_for(request.group_id, self._offsets_topic.partition_count())
            error = await self._coordinator.handle_add_partitions(
                request.transactional_id,
                int(request.producer_id),
                int(request.producer_epoch),
                {(OFFSETS_TOPIC, partition)},
            )
        return ctx.schema.AddOffsetsToTxnResponse(
            throttle_time=0, error_code=fenced_for(ctx.version, 2, error)
        )

    @api(ApiKeys.END_TXN, 0, 5)
    async def end_txn(self, ctx: RequestContext, request: Any) -> Any:
        """v5 is transaction version 2: the producer epoch moves on at the transaction's
        end, and the answer says the producer id and epoch to go on with."""
        ended = await self._coordinator.handle_end_transaction(
            request.transactional_id,
            int(request.producer_id),
            int(request.producer_epoch),
            bool(request.committed),
            TRANSACTION_VERSION_2 if ctx.version >= END_TXN_V2_VERSION else 1,
        )
        error = fenced_for(ctx.version, 2, ended.error)
        if ctx.version >= END_TXN_V2_VERSION:
            return ctx.schema.EndTxnResponse(
                throttle_time=0,
                error_code=error,
                producer_id=ended.producer_id,
                producer_epoch=ended.producer_epoch,
            )
        return ctx.schema.EndTxnResponse(throttle_time=0, error_code=error)

    @api(ApiKeys.LIST_TRANSACTIONS, 0, 1)
    async def list_transactions(self, ctx: RequestContext, request: Any) -> Any:
        """The transactions this broker coordinates, filtered by state, producer id and (v1)
        running for at least ``duration_filter`` ms."""
        states = set(request.state_filters)
        unknown = sorted(s for s in states if TransactionState.from_name(s) is None)
        producer_ids = {int(p) for p in request.producer_id_filters}
        min_duration = int(getattr(request, "duration_filter", -1))
        now = self._now_ms()
        coordinator = self._coordinator
        loaded = coordinator.loaded_transactions()
        if coordinator.is_loading():  # Kafka's answer: some of them cannot be listed yet
            loaded, error = [], ErrorCode.coordinator_load_in_progress
        else:
            error = ErrorCode.none
        listed = [
            md
            for md in loaded
            if md.producer_epoch >= 0
            and (not states or md.state.state_name in states)
            and (not producer_ids or md.producer_id in producer_ids)
            and (
                min_duration < 0
                or (md.txn_start_timestamp >= 0 and now - md.txn_start_timestamp >= min_duration)
            )
        ]
        s = ctx.schema
        return s.ListTransactionsResponse(
            throttle_time=0,
            error_code=error,
            unknown_state_filters=tuple(unknown),
            transaction_states=tuple(
                s.TransactionState(
                    transactional_id=md.transactional_id,
                    producer_id=md.producer_id,
                    transaction_state=md.state.state_name,
                )
                for md in listed
            ),
        )

    @api(ApiKeys.DESCRIBE_TRANSACTIONS, 0, 0)
    async def describe_transactions(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema

        def describe(txn_id: str) -> Any:
            try:
                md = self._coordinator.describe(txn_id)
            except KafkaError as exc:
                return s.TransactionState(
                    error_code=exc.code,
                    transactional_id=txn_id,
                    transaction_state="",
                    transaction_timeout=0,
                    transaction_start_time=_timestamp(-1),
                    producer_id=-1,
                    producer_epoch=-1,
                    topics=(),
                )
            by_topic: dict[str, list[int]] = {}
            for topic, index in sorted(md.topic_partitions):
                by_topic.setdefault(topic, []).append(index)
            return s.TransactionState(
                error_code=ErrorCode.none,
                transactional_id=txn_id,
                transaction_state=md.state.state_name,
                transaction_timeout=md.txn_timeout_ms,
                transaction_start_time=_timestamp(md.txn_start_timestamp),
                producer_id=md.producer_id,
                producer_epoch=md.producer_epoch,
                topics=tuple(
                    s.TopicData(topic=t, partitions=tuple(ps)) for t, ps in by_topic.items()
                ),
            )

        return s.DescribeTransactionsResponse(
            throttle_time=0,
            transaction_states=tuple(describe(t) for t in request.transactional_ids),
        )


def _topic_results(s: Any, errors: dict[TopicPartition, ErrorCode]) -> tuple[Any, ...]:
    by_topic: dict[str, list[Any]] = {}
    for (topic, index), error in errors.items():
        by_topic.setdefault(topic, []).append(
            s.AddPartitionsToTxnPartitionResult(partition_index=index, partition_error_code=error)
        )
    return tuple(
        s.AddPartitionsToTxnTopicResult(name=t, results_by_partition=tuple(ps))
        for t, ps in by_topic.items()
    )


def _timestamp(ms: int) -> datetime.datetime:
    """A non-nullable timestamp field; Kafka writes -1 for "none", which is 1 ms before
    the epoch as a datetime (the codec would turn a bare -1 into null)."""
    return datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(milliseconds=ms)
