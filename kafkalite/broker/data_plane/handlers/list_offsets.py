"""ListOffsets: earliest (-2), latest (-1), max timestamp (-3) or the first offset at or
after a timestamp.

"Latest" is the high watermark (or the last stable offset for read_committed): the end of
what a consumer may read, not the leader's log end offset. Right after a failover, until
the new leader's HW reaches the offset its epoch began at, it is OFFSET_NOT_AVAILABLE, as
in Kafka: the lagging HW would be an end below one the old leader already answered.
"Max timestamp" is the record with the largest timestamp (the first one, if several share
it). The tiered-storage specs (KIP-405 and successors) answer as Kafka does for a topic
without remote storage: the earliest local offset (-4) is the earliest, and nothing is
tiered or waiting to be (-5, -6 answer -1).
"""

from __future__ import annotations

from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.data_plane.replica_manager import ReplicaManager
from kafkalite.broker.handler_registry import api
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.errors import ErrorCode, KafkaError
from kafkalite.replication.partition import Partition
from kafkalite.storage.timestamp_lookup import max_timestamp_offset, offset_for_timestamp

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL = -4
LATEST_TIERED = -5
EARLIEST_PENDING_UPLOAD = -6


def _lagging(partition: Partition) -> KafkaError | None:
    """OFFSET_NOT_AVAILABLE while this leader's high watermark is below the offset its epoch
    began at. A new leader's HW is what it last heard from the old one and can lag what
    the old one already answered; until the HW reaches the new epoch's start, "the end of
    the committed log" would be an offset below one a client was told before (Kafka's
    ``Partition.fetchOffsetForTimestamp``; the client asks again)."""
    if partition.epoch_start_offset <= partition.high_watermark:
        return None
    return KafkaError(
        ErrorCode.offset_not_available,
        f"the high watermark ({partition.high_watermark}) lags the start of leader epoch "
        f"{partition.leader_epoch} ({partition.epoch_start_offset})",
    )


def _lookup(partition: Partition, timestamp: int, isolation: int) -> tuple[int, int]:
    """``(offset, timestamp)``; ``(-1, -1)`` when no record is at or after ``timestamp``.
    Raises OFFSET_NOT_AVAILABLE for "latest", and for a timestamp found at or beyond the
    readable end, while the HW lags the leader epoch's start (``_lagging``)."""
    bound = partition.fetch_offset_upper_bound(isolation)
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return partition.log_start_offset, -1
    if timestamp in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        return -1, -1
    lagging = _lagging(partition)
    if timestamp == LATEST:
        if lagging is not None:
            raise lagging
        return bound, -1
    if timestamp == MAX_TIMESTAMP:
        found = max_timestamp_offset(partition.log, bound)
    else:
        found = offset_for_timestamp(partition.log, timestamp)
    if found is None or found[0] >= bound:
        if lagging is not None:
            raise lagging
        return -1, -1
    return found


class ListOffsetsApi:
    """Answered from the logs of the partitions this broker leads."""

    def __init__(self, replicas: ReplicaManager) -> None:
        self._replicas = replicas

    def _partition(self, ctx: RequestContext, topic: str, p: Any, isolation: int) -> Any:
        s = ctx.schema
        try:
            partition = self._replicas.get_partition(topic, int(p.partition_index))
            partition.check_leader(int(getattr(p, "current_leader_epoch", -1)))
            offset, timestamp = _lookup(partition, int(p.timestamp), isolation)
        except KafkaError as exc:
            return s.ListOffsetsPartitionResponse(
                partition_index=p.partition_index, error_code=exc.code, timestamp=-1, offset=-1
            )
        return s.ListOffsetsPartitionResponse(
            partition_index=p.partition_index,
            error_code=ErrorCode.none,
            timestamp=timestamp,
            offset=offset,
            leader_epoch=partition.leader_epoch,
        )

    @api(ApiKeys.LIST_OFFSETS, 1, 11)
    async def list_offsets(self, ctx: RequestContext, request: Any) -> Any:
        isolation = int(getattr(request, "isolation_level", 0))
        s = ctx.schema
        return s.ListOffsetsResponse(
            throttle_time=0,
            topics=tuple(
                s.ListOffsetsTopicResponse(
                    name=t.name,
                    partitions=tuple(
                        self._partition(ctx, t.name, p, isolation) for p in t.partitions
                    ),
                )
                for t in request.topics
            ),
        )
