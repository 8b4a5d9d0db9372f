"""OffsetCommit, OffsetFetch and OffsetDelete: a group's consumed position, kept in
__consumer_offsets.

OffsetFetch with ``require_stable`` (KIP-447, what a read_committed consumer asks) answers
UNSTABLE_OFFSET_COMMIT for a partition whose offset a still-open transaction committed:
the consumer retries rather than start from an offset that may yet be aborted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kio.schema.offset_commit.v8.request import OffsetCommitRequest
from kio.schema.offset_delete.v0.request import OffsetDeleteRequest
from kio.schema.offset_fetch.v7.request import OffsetFetchRequest

from kafkalite.broker.context import RequestContext
from kafkalite.broker.handlers.registry import api
from kafkalite.coordinator.group.coordinator import GroupCoordinator
from kafkalite.coordinator.group.offsets_log import CommittedOffset
from kafkalite.events import EventSink, EventType
from kafkalite.metadata.image import MetadataImage
from kafkalite.protocol.errors import ErrorCode, KafkaError


class OffsetApis:
    """Served by the group coordinator; OffsetCommit checks the partitions against the
    metadata image first."""

    def __init__(
        self,
        coordinator: GroupCoordinator,
        image: MetadataImage,
        emit: EventSink,
        now_ms: Callable[[], int],
    ) -> None:
        self._coordinator = coordinator
        self._image = image
        self._emit = emit
        self._now_ms = now_ms

    @api(OffsetCommitRequest, 2, 8)
    async def offset_commit(self, ctx: RequestContext, request: Any) -> Any:
        """Partitions that do not exist get UNKNOWN_TOPIC_OR_PARTITION (Kafka checks them before
        the group does); the others are committed together, or fail together."""
        s = ctx.schema
        now = self._now_ms()
        image = self._image
        errors: dict[tuple[str, int], ErrorCode] = {}
        offsets: dict[tuple[str, int], CommittedOffset] = {}
        for t in request.topics:
            for p in t.partitions:
                key = (t.name, int(p.partition_index))
                if image.partition(*key) is None:
                    errors[key] = ErrorCode.unknown_topic_or_partition
                    continue
                offsets[key] = CommittedOffset(
                    int(p.committed_offset),
                    int(getattr(p, "committed_leader_epoch", -1)),
                    p.committed_metadata,
                    now,
                )
        error = ErrorCode.none
        if offsets:
            try:
                await self._coordinator.commit(
                    request.group_id,
                    int(request.generation_id_or_member_epoch),
                    request.member_id,
                    offsets,
                    getattr(request, "group_instance_id", None),
                )
            except KafkaError as exc:
                error = exc.code
        if offsets and error == ErrorCode.none:
            self._emit(
                EventType.OFFSETS_COMMITTED,
                group=request.group_id,
                offsets={f"{t}-{p}": c.offset for (t, p), c in offsets.items()},
            )
        return s.OffsetCommitResponse(
            throttle_time=0,
            topics=_partition_errors(ctx, "OffsetCommit", request.topics, errors, error),
        )

    @api(OffsetFetchRequest, 1, 7)
    async def offset_fetch(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        unstable: set[tuple[str, int]] = set()
        try:
            committed = self._coordinator.fetch_offsets(request.group_id)
            if getattr(request, "require_stable", False):
                unstable = self._coordinator.unstable_offsets(request.group_id)
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
            found = None if (topic, index) in unstable else committed.get((topic, index))
            partition_error = error if ctx.version < 2 else ErrorCode.none
            if (topic, index) in unstable:
                partition_error = ErrorCode.unstable_offset_commit
            return s.OffsetFetchResponsePartition(
                partition_index=index,
                committed_offset=found.offset if found else -1,
                committed_leader_epoch=found.leader_epoch if found else -1,
                metadata=(found.metadata if found else None) or "",
                error_code=partition_error,
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

    @api(OffsetDeleteRequest, 0, 0)
    async def offset_delete(self, ctx: RequestContext, request: Any) -> Any:
        """OffsetDelete: forget committed offsets of topics the group no longer consumes."""
        s = ctx.schema
        wanted = [(t.name, int(p.partition_index)) for t in request.topics for p in t.partitions]
        try:
            results = await self._coordinator.delete_offsets(request.group_id, wanted)
            error = ErrorCode.none
        except KafkaError as exc:
            results, error = {}, exc.code
        return s.OffsetDeleteResponse(
            error_code=error,
            throttle_time=0,
            topics=_partition_errors(ctx, "OffsetDelete", request.topics, results, ErrorCode.none)
            if error == ErrorCode.none
            else (),
        )


def _partition_errors(
    ctx: RequestContext,
    api: str,
    topics: Any,
    errors: dict[tuple[str, int], ErrorCode],
    default: ErrorCode,
) -> tuple[Any, ...]:
    """``<api>ResponseTopic``s echoing the requested partitions, each with its error."""
    s = ctx.schema
    topic_cls = getattr(s, f"{api}ResponseTopic")
    partition_cls = getattr(s, f"{api}ResponsePartition")
    return tuple(
        topic_cls(
            name=t.name,
            partitions=tuple(
                partition_cls(
                    partition_index=p.partition_index,
                    error_code=errors.get((t.name, int(p.partition_index)), default),
                )
                for p in t.partitions
            ),
        )
        for t in topics
    )
