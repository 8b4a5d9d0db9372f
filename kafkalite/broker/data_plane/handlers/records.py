"""DeleteRecords: move a partition's log start offset forward (never past the HW).

As in Kafka, the answer waits (up to the request's timeout) until every live replica's log
start has passed the offset (the *low watermark*): a follower that later leads must not
serve the deleted records again.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.data_plane.replica_manager import ReplicaManager
from kafkalite.broker.handler_registry import api
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.codec import millis
from kafkalite.protocol.errors import ErrorCode, KafkaError

TO_HIGH_WATERMARK = -1


class DeleteRecordsApi:
    """Moves log starts through the replica manager and waits for the low watermark."""

    def __init__(self, replicas: ReplicaManager) -> None:
        self._replicas = replicas

    async def _delete(self, ctx: RequestContext, topic: str, p: Any, timeout_s: float) -> Any:
        s = ctx.schema
        replicas = self._replicas
        index = int(p.partition_index)
        try:
            offset = int(p.offset)
            if offset == TO_HIGH_WATERMARK:
                offset = replicas.get_partition(topic, index).high_watermark
            replicas.delete_records(topic, index, offset)
        except KafkaError as exc:
            return s.DeleteRecordsPartitionResult(
                partition_index=p.partition_index, low_watermark=-1, error_code=exc.code
            )
        error, low = await replicas.wait_for_low_watermark(topic, index, offset, timeout_s)
        return s.DeleteRecordsPartitionResult(
            partition_index=p.partition_index,
            low_watermark=low if error == ErrorCode.none else -1,
            error_code=error,
        )

    @api(ApiKeys.DELETE_RECORDS, 0, 2)
    async def delete_records(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        timeout_s = max(millis(request.timeout), 0) / 1000

        async def topic_result(t: Any) -> Any:
            partitions = await asyncio.gather(
                *(self._delete(ctx, t.name, p, timeout_s) for p in t.partitions)
            )
            return s.DeleteRecordsTopicResult(name=t.name, partitions=tuple(partitions))

        topics = await asyncio.gather(*(topic_result(t) for t in request.topics))
        return s.DeleteRecordsResponse(throttle_time=0, topics=tuple(topics))
