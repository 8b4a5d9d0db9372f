"""InitProducerId and DescribeProducers: the idempotent producer's identity and state.

A non-transactional producer gets a fresh producer id (epoch 0). A producer that asks
again with its current id and epoch (KIP-360, after an OUT_OF_ORDER_SEQUENCE_NUMBER) gets
the same id with the next epoch, so its sequences restart at 0 without a new id.
"""

from __future__ import annotations

from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.handlers.registry import handles
from kafkalite.events import EventType
from kafkalite.protocol.errors import ErrorCode, KafkaError

MAX_EPOCH = 32767


@handles(22, 0, 4)
async def init_producer_id(ctx: RequestContext, request: Any) -> Any:
    s = ctx.schema
    if request.transactional_id is not None:
        return s.InitProducerIdResponse(
            throttle_time=0,
            error_code=ErrorCode.coordinator_not_available,
            producer_id=-1,
            producer_epoch=-1,
        )
    current_id = int(getattr(request, "producer_id", -1))
    current_epoch = int(getattr(request, "producer_epoch", -1))
    if current_id >= 0 and 0 <= current_epoch < MAX_EPOCH:
        producer_id, epoch = current_id, current_epoch + 1
    else:
        producer_id, epoch = await ctx.broker.producer_ids.next_id(), 0
    ctx.broker.events.emit(
        EventType.PRODUCER_ID_ASSIGNED,
        producer_id=producer_id,
        producer_epoch=epoch,
        client_id=ctx.request.client_id,
    )
    return s.InitProducerIdResponse(
        throttle_time=0, error_code=ErrorCode.none, producer_id=producer_id, producer_epoch=epoch
    )


def _describe_partition(ctx: RequestContext, topic: str, index: int) -> Any:
    s = ctx.schema
    try:
        partition = ctx.broker.replica_manager.get_partition(topic, index)
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


@handles(61, 0, 0)
async def describe_producers(ctx: RequestContext, request: Any) -> Any:
    s = ctx.schema
    return s.DescribeProducersResponse(
        throttle_time=0,
        topics=tuple(
            s.TopicResponse(
                name=t.name,
                partitions=tuple(
                    _describe_partition(ctx, t.name, int(i)) for i in t.partition_indexes
                ),
            )
            for t in request.topics
        ),
    )
