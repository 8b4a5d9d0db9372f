"""OffsetCommit and OffsetFetch: a group's consumed position, kept in __consumer_offsets."""

from __future__ import annotations

from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.handlers.registry import handles
from kafkalite.coordinator.group.offsets_log import CommittedOffset
from kafkalite.events import EventType
from kafkalite.protocol.errors import ErrorCode, KafkaError


@handles(8, 2, 8)
async def offset_commit(ctx: RequestContext, request: Any) -> Any:
    s = ctx.schema
    now = ctx.broker.now_ms()
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
        await ctx.broker.group_coordinator.commit(
            request.group_id, int(request.generation_id_or_member_epoch), request.member_id, offsets
        )
        error = ErrorCode.none
    except KafkaError as exc:
        error = exc.code
    if error == ErrorCode.none:
        ctx.broker.events.emit(
            EventType.OFFSETS_COMMITTED,
            group=request.group_id,
            offsets={f"{t}-{p}": c.offset for (t, p), c in offsets.items()},
        )
    return s.OffsetCommitResponse(
        throttle_time=0,
        topics=tuple(
            s.OffsetCommitResponseTopic(
                name=t.name,
                partitions=tuple(
                    s.OffsetCommitResponsePartition(
                        partition_index=p.partition_index, error_code=error
                    )
                    for p in t.partitions
                ),
            )
            for t in request.topics
        ),
    )


@handles(9, 1, 7)
async def offset_fetch(ctx: RequestContext, request: Any) -> Any:
    s = ctx.schema
    try:
        committed = ctx.broker.group_coordinator.fetch_offsets(request.group_id)
        error = ErrorCode.none
    except KafkaError as exc:
        committed, error = {}, exc.code
    if request.topics is None:
        wanted: dict[str, list[int]] = {}
        for topic, index in sorted(committed):
            wanted.setdefault(topic, []).append(index)
    else:
        wanted = {t.name: [int(i) for i in t.partition_indexes] for t in request.topics}

    def answer(topic: str, index: int) -> Any:
        found = committed.get((topic, index))
        return s.OffsetFetchResponsePartition(
            partition_index=index,
            committed_offset=found.offset if found else -1,
            committed_leader_epoch=found.leader_epoch if found else -1,
            metadata=(found.metadata if found else None) or "",
            error_code=error if ctx.version < 2 else ErrorCode.none,
        )

    return s.OffsetFetchResponse(
        throttle_time=0,
        error_code=error,
        topics=tuple(
            s.OffsetFetchResponseTopic(
                name=topic, partitions=tuple(answer(topic, i) for i in indexes)
            )
            for topic, indexes in wanted.items()
        ),
    )
