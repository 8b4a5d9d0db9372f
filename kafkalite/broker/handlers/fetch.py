"""Fetch (consumers): read committed data, waiting up to ``max_wait`` for ``min_bytes``.

Consumers read below the high watermark (``read_uncommitted``) or the last stable offset
(``read_committed``), never beyond, so they never see data a failover could remove.
Fetch sessions (KIP-227) are not kept: every response has ``session_id`` 0 and lists
every requested partition, which all clients accept as a sessionless fetch. ``records``
is always bytes, never null (librdkafka drops the connection on a null). Under
read_committed each partition's answer lists the aborted transactions overlapping its
records, ``(producer_id, first_offset)``: the client drops their records itself.
"""

from __future__ import annotations

from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.handlers.registry import handles
from kafkalite.broker.replica_manager import FetchRequestPartition, FetchResult
from kafkalite.protocol.codec import millis
from kafkalite.protocol.errors import ErrorCode


def _partitions(request: Any) -> list[FetchRequestPartition]:
    """Every requested partition; ``replica_id`` >= 0 marks a follower broker's fetch."""
    replica_id = int(request.replica_id)
    return [
        FetchRequestPartition(
            topic.topic,
            int(p.partition),
            int(p.fetch_offset),
            int(p.partition_max_bytes),
            int(getattr(p, "current_leader_epoch", -1)),
            replica_id,
            int(getattr(p, "log_start_offset", -1)),
        )
        for topic in request.topics
        for p in topic.partitions
    ]


@handles(1, 4, 12)
async def fetch(ctx: RequestContext, request: Any) -> Any:
    replicas = ctx.broker.replica_manager
    wanted = _partitions(request)
    isolation = int(request.isolation_level)
    max_wait_s = max(millis(request.max_wait), 0) / 1000
    replicas.record_follower_fetches(wanted)
    await replicas.wait_for_data(wanted, isolation, max(int(request.min_bytes), 1), max_wait_s)
    results = replicas.read_all(wanted, isolation, int(request.max_bytes))
    return _response(ctx, wanted, results)


def _response(
    ctx: RequestContext, wanted: list[FetchRequestPartition], results: list[FetchResult]
) -> Any:
    s = ctx.schema
    by_topic: dict[str, list[Any]] = {}
    for req, res in zip(wanted, results, strict=True):
        by_topic.setdefault(req.topic, []).append(
            s.PartitionData(
                partition_index=req.partition,
                error_code=res.error,
                high_watermark=res.high_watermark,
                last_stable_offset=res.last_stable_offset,
                log_start_offset=res.log_start_offset,
                aborted_transactions=tuple(
                    s.AbortedTransaction(producer_id=t.producer_id, first_offset=t.first_offset)
                    for t in res.aborted_transactions
                ),
                preferred_read_replica=-1,
                records=res.records,
            )
        )
    return s.FetchResponse(
        throttle_time=0,
        error_code=ErrorCode.none,
        session_id=0,
        responses=tuple(
            s.FetchableTopicResponse(topic=t, partitions=tuple(p)) for t, p in by_topic.items()
        ),
    )
