"""Metadata: brokers, the controller, and every partition's leader, replicas and ISR.

Answered from this broker's replayed metadata image, so any broker can answer it. A topic
the client names that does not exist is created on the spot when the client allows it and
``auto.create.topics.enable`` is true, as Kafka does, and answered LEADER_NOT_AVAILABLE
(retriable) in that response: its leaders are only now learning of it, and a client that
went straight to one would be told UNKNOWN_TOPIC_OR_PARTITION. When no controller can
create it in time (an election under way), the answer is the same retriable error.
"""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.control_plane_api import Controller, NotControllerError
from kafkalite.broker.data_plane.cluster_identity import ClusterIdentity
from kafkalite.broker.handler_registry import api
from kafkalite.controller.topic_control import INTERNAL_TOPICS, CreatableTopic, topic_name_error
from kafkalite.metadata.image import BrokerRegistration, PartitionRegistration, TopicImage
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.codec import EncodedResponse, encode_body, frame_with_body
from kafkalite.protocol.errors import ErrorCode

ZERO_UUID = uuid.UUID(int=0)
TOPIC_ID_LOOKUP_VERSION = 12
AUTO_CREATE_TIMEOUT_S = 5.0  # then answer a retriable error; clients ask again
MAX_ANSWERS_KEPT = 64


def _requested_names(ctx: RequestContext, request: Any) -> list[str] | None:
    """Names asked for, or None for "all topics" (v0 says that with an empty list)."""
    if request.topics is None or (ctx.version == 0 and not request.topics):
        return None
    return [t.name for t in request.topics if getattr(t, "name", None) is not None]


def _requested_ids(ctx: RequestContext, request: Any) -> list[uuid.UUID]:
    """Topic ids asked for (Metadata v12+, as Kafka serves them since 3.1); if any is
    given the topics are looked up by id only, never created."""
    if ctx.version < TOPIC_ID_LOOKUP_VERSION or not request.topics:
        return []
    return [t.topic_id for t in request.topics if t.topic_id not in (None, ZERO_UUID)]


def partition_fields(listed: set[int], index: int, reg: PartitionRegistration) -> dict[str, Any]:
    """One partition as Metadata and DescribeTopicPartitions report it, given the brokers
    the answer lists. A leader that is not among them (fenced, or a quorum leader this
    broker just found unreachable) is reported as none, LEADER_NOT_AVAILABLE, as Kafka
    does: the client refreshes its metadata instead of sending to a broker it was given no
    address for (kafka-python's producer raised UnknownBrokerIdError in its I/O thread for
    every batch until the send timed out)."""
    available = reg.leader >= 0 and reg.leader in listed
    return {
        "error_code": ErrorCode.none if available else ErrorCode.leader_not_available,
        "partition_index": index,
        "leader_id": reg.leader if available else -1,
        "leader_epoch": reg.leader_epoch,
        "replica_nodes": reg.replicas,
        "isr_nodes": reg.isr,
        "offline_replicas": tuple(r for r in reg.replicas if r not in listed),
    }


class MetadataApi:
    """Answered from this broker's metadata image; missing topics are created through
    the controller."""

    def __init__(self, cluster: ClusterIdentity, controller: Controller) -> None:
        self._cluster = cluster
        self._image = cluster.image
        self._controller = controller
        self._answers: dict[tuple[Any, ...], bytes] = {}
        """Encoded bodies of the answers given since the image last changed, by what they
        depend on: a client asks the same Metadata over and over (librdkafka every few
        seconds, and at every error), and building kio's tree of a response per partition
        cost more than anything else in it."""
        self._answers_at = -1

    async def auto_create(self, names: list[str]) -> set[str]:
        """Create the missing topics among ``names``; returns the ones asked to be created."""
        if not self._image.broker_bool("auto.create.topics.enable"):
            return set()
        missing = [n for n in names if self._image.topic(n) is None and topic_name_error(n) is None]
        if missing:
            with contextlib.suppress(NotControllerError):
                await self._controller.create_topics(
                    [CreatableTopic(n, -1, -1) for n in missing], timeout_s=AUTO_CREATE_TIMEOUT_S
                )
        return set(missing)

    def _topic(self, ctx: RequestContext, image_topic: TopicImage, listed: set[int]) -> Any:
        s = ctx.schema
        partitions = tuple(
            s.MetadataResponsePartition(**partition_fields(listed, index, reg))
            for index, reg in sorted(image_topic.partitions.items())
        )
        return s.MetadataResponseTopic(
            error_code=ErrorCode.none,
            name=image_topic.name,
            topic_id=uuid.UUID(image_topic.topic_id),
            is_internal=image_topic.name in INTERNAL_TOPICS,
            partitions=partitions,
        )

    @api(ApiKeys.METADATA, 0, 13)
    async def metadata(self, ctx: RequestContext, request: Any) -> EncodedResponse:
        image = self._image
        names = _requested_names(ctx, request)
        topic_ids = _requested_ids(ctx, request)
        created: set[str] = set()
        if names is not None and getattr(request, "allow_auto_topic_creation", True):
            created = await self.auto_create(names)
        listed = self._cluster.brokers_for_clients()
        key = (
            ctx.version,
            None if names is None else tuple(names),
            tuple(topic_ids),
            tuple(b.broker_id for b in listed),
            self._cluster.controller_id(),
        )
        if self._answers_at != image.offset or len(self._answers) > MAX_ANSWERS_KEPT:
            self._answers.clear()
            self._answers_at = image.offset
        body = self._answers.get(key) if not created else None
        if body is None:
            body = encode_body(self._response(ctx, names, topic_ids, created, listed))
            if not created:  # an answer about topics being created is not kept
                self._answers[key] = body
        return EncodedResponse(
            [frame_with_body(ctx.request.api_key, ctx.version, ctx.request.correlation_id, body)]
        )

    def _response(
        self,
        ctx: RequestContext,
        names: list[str] | None,
        topic_ids: list[uuid.UUID],
        created: set[str],
        listed: list[BrokerRegistration],
    ) -> Any:
        image = self._image
        ids = {b.broker_id for b in listed}
        if topic_ids:  # v12+: by topic id (a KIP-848 consumer learns its partitions so)
            topics = [
                self._topic(ctx, found, ids)
                if (found := image.topics_by_id.get(str(topic_id)))
                else ctx.schema.MetadataResponseTopic(
                    error_code=ErrorCode.unknown_topic_id,
                    name=None,
                    topic_id=topic_id,
                    partitions=(),
                )
                for topic_id in topic_ids
            ]
        elif names is None:
            topics = [
                self._topic(ctx, t, ids)
                for t in sorted(image.topics_by_id.values(), key=lambda t: t.name)
            ]
        else:
            topics = [
                self._topic(ctx, found, ids)
                if (found := image.topic(n)) and n not in created
                else _missing(ctx, n, n in created)
                for n in names
            ]
        s = ctx.schema
        brokers = tuple(
            s.MetadataResponseBroker(node_id=b.broker_id, host=b.host, port=b.port, rack=b.rack)
            for b in listed
        )
        return s.MetadataResponse(
            error_code=ErrorCode.none,
            throttle_time=0,
            brokers=brokers,
            cluster_id=self._cluster.cluster_id,
            controller_id=self._cluster.controller_id(),
            topics=tuple(topics),
            cluster_authorized_operations=-2147483648,
        )


def _missing(ctx: RequestContext, name: str, being_created: bool = False) -> Any:
    if topic_name_error(name):
        error = ErrorCode.invalid_topic_exception
    elif being_created:
        error = ErrorCode.leader_not_available
    else:
        error = ErrorCode.unknown_topic_or_partition
    return ctx.schema.MetadataResponseTopic(
        error_code=error, name=name, topic_id=ZERO_UUID, partitions=()
    )
