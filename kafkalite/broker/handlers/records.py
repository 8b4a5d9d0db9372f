"""DeleteRecords: move a partition's log start offset forward (never past the HW)."""

from __future__ import annotations

from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.handlers.registry import handles
from kafkalite.events import EventType
from kafkalite.protocol.errors import ErrorCode, KafkaError

TO_HIGH_WATERMARK = -1


def _delete(ctx: RequestContext, topic: str, p: Any) -> Any:
    s = ctx.schema
    try:
        partition = ctx.broker.replica_manager.get_partition(topic, int(p.partition_index))
        partition.check_leader()
        offset = int(p.offset)
        if offset == TO_HIGH_WATERMARK:
            offset = partition.high_watermark
        if offset < 0 or offset > partition.high_watermark:
            raise KafkaError(ErrorCode.offset_out_of_range)
        low = partition.log.delete_records_before(offset)
    except KafkaError as exc:
        return s.DeleteRecordsPartitionResult(
            partition_index=p.partition_index, low_watermark=-1, error_code=exc.code
        )
    ctx.broker.events.emit(
        EventType.RECORDS_DELETED,
        topic=topic,
        partition=int(p.partition_index),
        log_start_offset=low,
    )
    return s.DeleteRecordsPartitionResult(
        partition_index=p.partition_index, low_watermark=low, error_code=ErrorCode.none
    )


@handles(21, 0, 2)
async def delete_records(ctx: RequestContext, request: Any) -> Any:
    s = ctx.schema
    return s.DeleteRecordsResponse(
        throttle_time=0,
        topics=tuple(
            s.DeleteRecordsTopicResult(
                name=t.name, partitions=tuple(_delete(ctx, t.name, p) for p in t.partitions)
            )
            for t in request.topics
        ),
    )
