"""Fetch (consumers): read committed data, waiting up to ``max_wait`` for ``min_bytes``.

Consumers read below the high watermark (``read_uncommitted``) or the last stable offset
(``read_committed``), never beyond, so they never see data a failover could remove.
Fetch sessions (KIP-227) are not kept: every response has ``session_id`` 0 and lists
every requested partition, which all clients accept as a sessionless fetch. ``records``
is always bytes, never null (librdkafka drops the connection on a null). Under
read_committed each partition's answer lists the aborted transactions overlapping its
records, ``(producer_id, first_offset)``: the client drops their records itself. From v13
on, topics are named by their id: an id this broker does not know (a topic deleted, or
recreated under a new id) is UNKNOWN_TOPIC_ID, and the client refreshes its metadata.
"""

from __future__ import annotations

import asyncio
import uuid
from functools import lru_cache
from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.data_plane.replica_manager import (
    FetchRequestPartition,
    FetchResult,
    ReplicaManager,
)
from kafkalite.broker.handler_registry import api
from kafkalite.metadata.image import MetadataImage
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.codec import EncodedResponse, millis
from kafkalite.protocol.errors import ErrorCode
from kafkalite.protocol.fetch_response import encode_fetch_response

TOPIC_IDS_VERSION = 13  # from Fetch v13 on, topics are named by id (KIP-516)


def _replica_id(request: Any) -> int:
    """Who fetches: ``replica_id`` (v15+: ``replica_state``), -1 for a consumer."""
    state = getattr(request, "replica_state", None)
    return int(state.replica_id if state is not None else request.replica_id)


@lru_cache(maxsize=4096)
def _uuid(topic_id: str | None) -> uuid.UUID:
    """A topic id as a UUID (the image keeps them as strings), parsed once per topic."""
    return uuid.UUID(topic_id) if topic_id else uuid.UUID(int=0)


class FetchApi:
    """Consumers' and followers' fetches, served by the replica manager; topic ids are
    resolved against this broker's metadata image."""

    def __init__(self, replicas: ReplicaManager, image: MetadataImage) -> None:
        self._replicas = replicas
        self._image = image

    def _topic_name(self, ctx: RequestContext, topic: Any) -> str | None:
        """The topic a request names (v13+ by topic id); None for an id nobody knows."""
        if ctx.version < TOPIC_IDS_VERSION:
            return str(topic.topic)
        found = self._image.topics_by_id.get(str(topic.topic_id))
        return None if found is None else found.name

    def _partitions(
        self, ctx: RequestContext, request: Any
    ) -> tuple[list[FetchRequestPartition], list[tuple[Any, int]]]:
        """Every requested partition of a known topic (``replica_id`` >= 0 marks a follower
        broker's fetch), and the ``(topic_id, partition)`` pairs whose topic id is unknown."""
        replica_id = _replica_id(request)
        wanted, unknown = [], []
        for topic in request.topics:
            name = self._topic_name(ctx, topic)
            for p in topic.partitions:
                if name is None:
                    unknown.append((topic.topic_id, int(p.partition)))
                    continue
                wanted.append(
                    FetchRequestPartition(
                        name,
                        int(p.partition),
                        int(p.fetch_offset),
                        int(p.partition_max_bytes),
                        int(getattr(p, "current_leader_epoch", -1)),
                        replica_id,
                        int(getattr(p, "log_start_offset", -1)),
                    )
                )
        return wanted, unknown

    @api(ApiKeys.FETCH, 4, 17)
    async def fetch(self, ctx: RequestContext, request: Any) -> EncodedResponse:
        replicas = self._replicas
        wanted, unknown = self._partitions(ctx, request)
        isolation = int(request.isolation_level)
        max_wait_ms = max(millis(request.max_wait), 0)
        max_wait_s = max_wait_ms / 1000
        held_until_ms = replicas.record_follower_fetches(wanted, max_wait_ms)
        try:
            await replicas.wait_for_data(
                wanted, isolation, max(int(request.min_bytes), 1), max_wait_s
            )
        except asyncio.CancelledError:  # the connection closed while the Fetch waited
            replicas.abandon_follower_fetches(wanted, held_until_ms)
            raise
        results = replicas.read_all(wanted, isolation, int(request.max_bytes))
        return self._response(ctx, wanted, results, unknown)

    def _response(
        self,
        ctx: RequestContext,
        wanted: list[FetchRequestPartition],
        results: list[FetchResult],
        unknown: list[tuple[Any, int]],
    ) -> EncodedResponse:
        """Encoded by hand (``protocol.fetch_response``): each partition's records stay
        in their segment file and go to the socket from there."""
        topic_ids = self._image.topic_ids
        by_topic: dict[tuple[str, uuid.UUID], list[tuple[int, FetchResult]]] = {}
        names: dict[str, tuple[str, uuid.UUID]] = {}
        for req, res in zip(wanted, results, strict=True):
            key = names.get(req.topic)
            if key is None:
                key = names[req.topic] = (req.topic, _uuid(topic_ids.get(req.topic)))
            by_topic.setdefault(key, []).append((req.partition, res))
        for topic_id, index in unknown:
            key = ("", topic_id)
            by_topic.setdefault(key, []).append((index, FetchResult(ErrorCode.unknown_topic_id)))
        topics = [(name, topic_id, parts) for (name, topic_id), parts in by_topic.items()]
        return EncodedResponse(
            encode_fetch_response(ctx.version, ctx.request.correlation_id, topics)
        )
