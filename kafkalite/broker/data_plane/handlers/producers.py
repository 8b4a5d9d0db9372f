"""InitProducerId and DescribeProducers: a producer's identity, and its state per partition.

A producer without a ``transactional.id`` always gets a fresh producer id with epoch 0,
whatever id and epoch it names, as in Kafka: its epoch belongs to it alone, so only the
producer itself may bump it (KIP-360 clients do so locally), and no request can fence
another producer. A transactional producer is answered by its transaction coordinator,
which bumps the epoch of the id (fencing an older instance) and, when the producer names
its current id and epoch after a lost sequence (KIP-360), bumps that one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.data_plane.handlers.transactions import fenced_for
from kafkalite.broker.data_plane.replica_manager import ReplicaManager
from kafkalite.broker.handler_registry import api
from kafkalite.coordinator.transaction.coordinator import TransactionCoordinator
from kafkalite.coordinator.transaction.operations import ProducerIdAndEpoch
from kafkalite.events import EventSink, EventType
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.codec import millis
from kafkalite.protocol.errors import ErrorCode, KafkaError


class ProducerApis:
    """InitProducerId from the transaction coordinator (transactional producers) or the
    producer id manager (the others); DescribeProducers from the led partitions' logs."""

    def __init__(
        self,
        transactions: TransactionCoordinator,
        next_producer_id: Callable[[], Awaitable[int]],
        replicas: ReplicaManager,
        emit: EventSink,
    ) -> None:
        self._transactions = transactions
        self._next_producer_id = next_producer_id
        self._replicas = replicas
        self._emit = emit

    @api(ApiKeys.INIT_PRODUCER_ID, 0, 5)
    async def init_producer_id(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        if request.transactional_id is not None:
            current_id = int(getattr(request, "producer_id", -1))
            current_epoch = int(getattr(request, "producer_epoch", -1))
            result = await self._transactions.handle_init_producer_id(
                request.transactional_id,
                millis(request.transaction_timeout),
                ProducerIdAndEpoch(current_id, current_epoch) if current_id >= 0 else None,
            )
            if result.error == ErrorCode.none:
                self._emit(
                    EventType.PRODUCER_ID_ASSIGNED,
                    producer_id=result.producer_id,
                    producer_epoch=result.producer_epoch,
                    client_id=ctx.request.client_id,
                    transactional_id=request.transactional_id,
                )
            return s.InitProducerIdResponse(
                throttle_time=0,
                error_code=fenced_for(ctx.version, 4, result.error),
                producer_id=result.producer_id,
                producer_epoch=result.producer_epoch,
            )
        producer_id, epoch = await self._next_producer_id(), 0
        self._emit(
            EventType.PRODUCER_ID_ASSIGNED,
            producer_id=producer_id,
            producer_epoch=epoch,
            client_id=ctx.request.client_id,
        )
        return s.InitProducerIdResponse(
            throttle_time=0,
            error_code=ErrorCode.none,
            producer_id=producer_id,
            producer_epoch=epoch,
        )

    def _describe_partition(self, ctx: RequestContext, topic: str, index: int) -> Any:
        s = ctx.schema
        try:
            partition = self._replicas.get_partition(topic, index)
            partition.check_leader()
        except KafkaError as exc:
            return s.PartitionResponse(
                partition_index=index,
                error_code=exc.code,
                error_message=exc.message,
                active_producers=(),
            )
        producers = tuple(
            s.ProducerState(
                producer_id=p["producer_id"],
                producer_epoch=p["producer_epoch"],
                last_sequence=p["last_sequence"],
                last_timestamp=p["last_timestamp"],
                coordinator_epoch=p["coordinator_epoch"],
                current_txn_start_offset=p["current_txn_start_offset"],
            )
            for p in partition.log.producer_state.describe()
        )
        return s.PartitionResponse(
            partition_index=index,
            error_code=ErrorCode.none,
            error_message=None,
            active_producers=producers,
        )

    @api(ApiKeys.DESCRIBE_PRODUCERS, 0, 0)
    async def describe_producers(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        return s.DescribeProducersResponse(
            throttle_time=0,
            topics=tuple(
                s.TopicResponse(
                    name=t.name,
                    partitions=tuple(
                        self._describe_partition(ctx, t.name, int(i)) for i in t.partition_indexes
                    ),
                )
                for t in request.topics
            ),
        )
