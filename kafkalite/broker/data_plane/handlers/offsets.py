"""OffsetCommit, OffsetFetch and OffsetDelete: a group's consumed position, kept in
__consumer_offsets.

OffsetFetch with ``require_stable`` (KIP-447, what a read_committed consumer asks) answers
UNSTABLE_OFFSET_COMMIT for a partition whose offset a still-open transaction committed:
the consumer retries rather than start from an offset that may yet be aborted.

OffsetFetch v8+ asks for several groups at once (KIP-709), each answered on its own (its
own error); v9 adds the member id and epoch a KIP-848 consumer names, checked against a
consumer group's member as Kafka does (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH). OffsetCommit v9
answers GROUP_ID_NOT_FOUND where older versions get ILLEGAL_GENERATION: a commit from a
member (generation >= 0) of a group that does not exist (Kafka's ``validateOffsetCommit``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.handler_registry import api
from kafkalite.coordinator.group.coordinator import GroupCoordinator
from kafkalite.coordinator.group.offsets_log import CommittedOffset
from kafkalite.events import EventSink, EventType
from kafkalite.metadata.image import MetadataImage
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.errors import ErrorCode, KafkaError

BATCHED_OFFSET_FETCH_VERSION = 8  # KIP-709: a list of groups, each answered on its own


@dataclass(frozen=True, slots=True)
class FetchedOffsets:
    """One group's answer: its error, and per requested partition what it committed
    (None for nothing), or UNSTABLE_OFFSET_COMMIT where a transaction holds it."""

    error: ErrorCode
    topics: dict[str, list[tuple[int, CommittedOffset | None, ErrorCode]]]


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

    @api(ApiKeys.OFFSET_COMMIT, 2, 9)
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
                    api_version=ctx.version,
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

    def _fetch(
        self,
        group_id: str,
        topics: Any,
        require_stable: bool,
        member_id: str | None = None,
        member_epoch: int = -1,
    ) -> FetchedOffsets:
        """What ``group_id`` committed for ``topics`` (null: every partition it has). A
        member of a consumer group (v9+) must name its current epoch."""
        unstable: set[tuple[str, int]] = set()
        try:
            committed = self._coordinator.fetch_offsets(group_id)
            consumer_group = self._coordinator.manager.consumer_groups.get(group_id)
            if consumer_group is not None:
                consumer_group.validate_offset_fetch(member_id, member_epoch)
            if require_stable:
                unstable = self._coordinator.unstable_offsets(group_id)
        except KafkaError as exc:
            return FetchedOffsets(exc.code, {})
        if topics is None:
            wanted: dict[str, list[int]] = {}
            for topic, index in sorted(committed):
                wanted.setdefault(topic, []).append(index)
        else:
            wanted = {t.name: [int(i) for i in t.partition_indexes] for t in topics}
        return FetchedOffsets(
            ErrorCode.none,
            {
                topic: [
                    (i, None, ErrorCode.unstable_offset_commit)
                    if (topic, i) in unstable
                    else (i, committed.get((topic, i)), ErrorCode.none)
                    for i in indexes
                ]
                for topic, indexes in wanted.items()
            },
        )

    @api(ApiKeys.OFFSET_FETCH, 1, 9)
    async def offset_fetch(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        require_stable = bool(getattr(request, "require_stable", False))
        if ctx.version >= BATCHED_OFFSET_FETCH_VERSION:
            groups = []
            for group in request.groups:
                fetched = self._fetch(
                    group.group_id,
                    group.topics,
                    require_stable,
                    getattr(group, "member_id", None),
                    int(getattr(group, "member_epoch", -1)),
                )
                groups.append(
                    s.OffsetFetchResponseGroup(
                        group_id=group.group_id,
                        error_code=fetched.error,
                        topics=_fetched_topics(
                            s, "OffsetFetchResponseTopics", "OffsetFetchResponsePartitions", fetched
                        ),
                    )
                )
            return s.OffsetFetchResponse(throttle_time=0, groups=tuple(groups))
        fetched = self._fetch(request.group_id, request.topics, require_stable)
        if fetched.error != ErrorCode.none and request.topics is not None:
            # the group failed as a whole: v1 says so in each partition, v2+ at the top
            partition_error = fetched.error if ctx.version < 2 else ErrorCode.none
            fetched = FetchedOffsets(
                fetched.error,
                {
                    t.name: [(int(i), None, partition_error) for i in t.partition_indexes]
                    for t in request.topics
                },
            )
        return s.OffsetFetchResponse(
            throttle_time=0,
            error_code=fetched.error,
            topics=_fetched_topics(
                s, "OffsetFetchResponseTopic", "OffsetFetchResponsePartition", fetched
            ),
        )

    @api(ApiKeys.OFFSET_DELETE, 0, 0)
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


def _fetched_topics(
    s: Any, topic_class: str, partition_class: str, fetched: FetchedOffsets
) -> tuple[Any, ...]:
    """The topics of an OffsetFetch answer (-1 where nothing is committed)."""
    topic_cls, partition_cls = getattr(s, topic_class), getattr(s, partition_class)
    return tuple(
        topic_cls(
            name=topic,
            partitions=tuple(
                partition_cls(
                    partition_index=index,
                    committed_offset=found.offset if found else -1,
                    committed_leader_epoch=found.leader_epoch if found else -1,
                    metadata=(found.metadata if found else None) or "",
                    error_code=error,
                )
                for index, found, error in partitions
            ),
        )
        for topic, partitions in fetched.topics.items()
    )
