"""DescribeTopicPartitions (KIP-966): topics and their partitions, a page at a time.

What admin clients use instead of Metadata to describe topics on Kafka 3.7+: the same
leaders, replicas and ISRs, without creating topics, paged by a cursor so that a topic with
thousands of partitions does not make one huge response. Kafka-Lite has no eligible leader
replicas (ELR, KIP-966's other half): those lists are empty.
"""

from __future__ import annotations

import uuid
from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.data_plane.handlers.metadata import ZERO_UUID, partition_fields
from kafkalite.broker.handler_registry import api
from kafkalite.controller.topic_control import INTERNAL_TOPICS
from kafkalite.metadata.image import MetadataImage
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.errors import ErrorCode

Page = list[tuple[str, list[int]]]


def paginate(
    topics: list[tuple[str, list[int]]], cursor: tuple[str, int] | None, limit: int
) -> tuple[Page, tuple[str, int] | None]:
    """The topics (sorted by name) from ``cursor`` on, with at most ``limit`` partitions in
    all, and the cursor of the first partition left out (None when nothing is)."""
    page: Page = []
    taken = 0
    for name, partitions in sorted(topics):
        if cursor is not None and name < cursor[0]:
            continue
        start = cursor[1] if cursor is not None and name == cursor[0] else 0
        wanted = [p for p in partitions if p >= start]
        room = limit - taken
        if len(wanted) > room:
            if room > 0:
                page.append((name, wanted[:room]))
            return page, (name, wanted[room])
        page.append((name, wanted))
        taken += len(wanted)
    return page, None


def _topics(image: MetadataImage, names: list[str]) -> list[tuple[str, list[int]]]:
    """Every topic asked for (all of them when none is named), with its partition ids."""
    wanted = names or sorted(image.topic_ids)
    return [
        (name, sorted(found.partitions) if (found := image.topic(name)) is not None else [])
        for name in wanted
    ]


class TopicPartitionsApi:
    """Answered from this broker's metadata image."""

    def __init__(self, image: MetadataImage) -> None:
        self._image = image

    @api(ApiKeys.DESCRIBE_TOPIC_PARTITIONS, 0, 0)
    async def describe_topic_partitions(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        image = self._image
        cursor = (
            None
            if request.cursor is None
            else (request.cursor.topic_name, int(request.cursor.partition_index))
        )
        page, next_cursor = paginate(
            _topics(image, [t.name for t in request.topics]),
            cursor,
            max(int(request.response_partition_limit), 1),
        )

        live = image.live_broker_ids()  # once per request, not per partition

        def topic(name: str, indexes: list[int]) -> Any:
            found = image.topic(name)
            if found is None:
                return s.DescribeTopicPartitionsResponseTopic(
                    error_code=ErrorCode.unknown_topic_or_partition,
                    name=name,
                    topic_id=ZERO_UUID,
                    partitions=(),
                )
            return s.DescribeTopicPartitionsResponseTopic(
                error_code=ErrorCode.none,
                name=name,
                topic_id=uuid.UUID(found.topic_id),
                is_internal=name in INTERNAL_TOPICS,
                partitions=tuple(
                    s.DescribeTopicPartitionsResponsePartition(
                        **partition_fields(live, i, found.partitions[i]),
                        eligible_leader_replicas=(),
                        last_known_elr=(),
                    )
                    for i in indexes
                ),
                topic_authorized_operations=-2147483648,
            )

        return s.DescribeTopicPartitionsResponse(
            throttle_time=0,
            topics=tuple(topic(name, indexes) for name, indexes in page),
            next_cursor=None
            if next_cursor is None
            else s.Cursor(topic_name=next_cursor[0], partition_index=next_cursor[1]),
        )
