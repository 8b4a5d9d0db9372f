"""OffsetForLeaderEpoch: where did epoch N end on the leader?

A consumer (after a leader change) or a returning follower asks it; the answer is the
start offset of the next epoch in the leader's epoch cache, or its log end offset for the
current epoch. Anything the asker has beyond that offset was never committed under the
new leader and must be truncated.
"""

from __future__ import annotations

from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.data_plane.replica_manager import ReplicaManager
from kafkalite.broker.handler_registry import api
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.errors import ErrorCode, KafkaError


class LeaderEpochApi:
    """Answered from the epoch caches of the partitions this broker leads."""

    def __init__(self, replicas: ReplicaManager) -> None:
        self._replicas = replicas

    def _end_offset(self, ctx: RequestContext, topic: str, p: Any) -> Any:
        s = ctx.schema
        try:
            partition = self._replicas.get_partition(topic, int(p.partition))
            partition.check_leader(int(p.current_leader_epoch))
            epoch, end_offset = partition.log.leader_epoch_cache.end_offset_for(
                int(p.leader_epoch), partition.log_end_offset
            )
        except KafkaError as exc:
            return s.EpochEndOffset(
                error_code=exc.code, partition=p.partition, leader_epoch=-1, end_offset=-1
            )
        return s.EpochEndOffset(
            error_code=ErrorCode.none,
            partition=p.partition,
            leader_epoch=epoch,
            end_offset=end_offset,
        )

    @api(ApiKeys.OFFSET_FOR_LEADER_EPOCH, 2, 4)
    async def offset_for_leader_epoch(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        return s.OffsetForLeaderEpochResponse(
            throttle_time=0,
            topics=tuple(
                s.OffsetForLeaderTopicResult(
                    topic=t.topic,
                    partitions=tuple(self._end_offset(ctx, t.topic, p) for p in t.partitions),
                )
                for t in request.topics
            ),
        )
