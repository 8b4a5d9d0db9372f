"""CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders: forwarded to the controller.

Validation (names, partition counts, replication factor against live brokers, configs)
happens in the controller, so every broker gives the same answer to the same request.
CreateTopics v7 answers each new topic's id; DeleteTopics v6 names topics by name or by
id (KIP-516): an id nobody knows is UNKNOWN_TOPIC_ID, and a request naming a topic twice,
by both name and id, or by neither is INVALID_REQUEST for that entry, as in Kafka's
``ControllerApis.deleteTopics``.
"""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.control_plane_api import Controller
from kafkalite.broker.handler_registry import api
from kafkalite.controller.topic_control import CreatableTopic
from kafkalite.metadata.image import MetadataImage
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.codec import millis
from kafkalite.protocol.errors import ErrorCode

ZERO_UUID = uuid.UUID(int=0)


def _seconds(timeout: Any) -> float | None:
    """A request's ``timeout`` (how long the controller may wait for every live broker
    to apply the change); None for 0, librdkafka's default, meaning the default bound."""
    return millis(timeout) / 1000 or None


def _creatable(topic: Any) -> CreatableTopic:
    return CreatableTopic(
        name=topic.name,
        num_partitions=int(topic.num_partitions),
        replication_factor=int(topic.replication_factor),
        configs={c.name: c.value for c in topic.configs},
        assignments={
            int(a.partition_index): tuple(int(b) for b in a.broker_ids) for a in topic.assignments
        },
    )


@dataclass(frozen=True, slots=True)
class RefusedDeletion:
    name: str | None
    topic_id: uuid.UUID
    error: ErrorCode
    message: str | None = None


@dataclass(slots=True)
class Deletions:
    """A DeleteTopics request resolved against the metadata image: the names to delete
    (with the id each has now) and the entries refused before the controller sees them."""

    names: list[str] = field(default_factory=list)
    ids: dict[str, uuid.UUID] = field(default_factory=dict)
    refused: list[RefusedDeletion] = field(default_factory=list)


def resolve_deletions(
    entries: list[tuple[str | None, uuid.UUID]], topic_ids: dict[str, str], id_names: dict[str, str]
) -> Deletions:
    """Kafka's checks of ``ControllerApis.deleteTopics``: each entry is a name or an id
    (never both, never neither), none may appear twice, and an id must be known.
    ``topic_ids`` maps names to ids, ``id_names`` ids to names (the image's)."""
    result = Deletions()
    names = Counter(
        name for name, topic_id in entries if name is not None and topic_id == ZERO_UUID
    )
    ids = Counter(topic_id for name, topic_id in entries if name is None and topic_id != ZERO_UUID)
    for name, topic_id in entries:
        if name is None and topic_id == ZERO_UUID:
            message = "Neither topic name nor id were specified."
            result.refused.append(
                RefusedDeletion(None, ZERO_UUID, ErrorCode.invalid_request, message)
            )
        elif name is not None and topic_id != ZERO_UUID:
            message = "You may not specify both topic name and topic id."
            result.refused.append(
                RefusedDeletion(name, topic_id, ErrorCode.invalid_request, message)
            )
    for name, count in names.items():
        if count > 1:
            refused = RefusedDeletion(
                name, ZERO_UUID, ErrorCode.invalid_request, "Duplicate topic name."
            )
            result.refused.append(refused)
        else:
            result.names.append(name)
    for topic_id, count in ids.items():
        known = id_names.get(str(topic_id))
        if count > 1:
            refused = RefusedDeletion(
                None, topic_id, ErrorCode.invalid_request, "Duplicate topic id."
            )
            result.refused.append(refused)
        elif known is None:
            result.refused.append(RefusedDeletion(None, topic_id, ErrorCode.unknown_topic_id))
        else:
            result.names.append(known)
    for name in result.names:
        known_id = topic_ids.get(name)
        result.ids[name] = ZERO_UUID if known_id is None else uuid.UUID(known_id)
    return result


def _deletion_entries(request: Any) -> list[tuple[str | None, uuid.UUID]]:
    """(name, id) per entry: v6+ names topics in ``topics``, older versions by name."""
    topics = getattr(request, "topics", None)
    if topics is None:
        return [(str(name), ZERO_UUID) for name in request.topic_names]
    return [(t.name, t.topic_id or ZERO_UUID) for t in topics]


class TopicApis:
    """Served by the controller (forwarded to it); CreateTopics describes the new topics'
    configs from the metadata image."""

    def __init__(self, controller: Controller, image: MetadataImage) -> None:
        self._controller = controller
        self._image = image

    @api(ApiKeys.CREATE_TOPICS, 2, 7, forward=True)
    async def create_topics(self, ctx: RequestContext, request: Any) -> Any:
        created = await self._controller.create_topics(
            [_creatable(t) for t in request.topics],
            bool(request.validate_only),
            propagation_timeout_s=_seconds(request.timeout),
        )
        s = ctx.schema
        image = self._image
        results = []
        for c in created:
            ok = c.result.error == 0
            describe = (
                ok and not request.validate_only and s.has_field("CreatableTopicResult", "configs")
            )
            configs = image.topic_configs_resolved(c.name) if describe else {}
            topic_id = image.topic_ids.get(c.name) if ok and not request.validate_only else None
            results.append(
                s.CreatableTopicResult(
                    name=c.name,
                    topic_id=uuid.UUID(topic_id) if topic_id else ZERO_UUID,
                    error_code=c.result.error,
                    error_message=c.result.message,
                    topic_config_error_code=0,
                    num_partitions=c.num_partitions,
                    replication_factor=c.replication_factor,
                    configs=tuple(
                        s.CreatableTopicConfigs(
                            name=k, value=v, read_only=False, config_source=5, is_sensitive=False
                        )
                        for k, v in sorted(configs.items())
                    ),
                )
            )
        return s.CreateTopicsResponse(throttle_time=0, topics=tuple(results))

    @api(ApiKeys.DELETE_TOPICS, 1, 6, forward=True)
    async def delete_topics(self, ctx: RequestContext, request: Any) -> Any:
        image = self._image
        id_names = {topic_id: t.name for topic_id, t in image.topics_by_id.items()}
        deletions = resolve_deletions(_deletion_entries(request), image.topic_ids, id_names)
        deleted = (
            await self._controller.delete_topics(deletions.names, _seconds(request.timeout))
            if deletions.names
            else []
        )
        s = ctx.schema
        results = [
            s.DeletableTopicResult(
                name=name,
                topic_id=deletions.ids.get(name, ZERO_UUID),
                error_code=r.error,
                error_message=r.message,
            )
            for name, r in deleted
        ]
        results += [
            s.DeletableTopicResult(
                name=r.name, topic_id=r.topic_id, error_code=r.error, error_message=r.message
            )
            for r in deletions.refused
        ]
        return s.DeleteTopicsResponse(throttle_time=0, responses=tuple(results))

    @api(ApiKeys.CREATE_PARTITIONS, 0, 3, forward=True)
    async def create_partitions(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        results = []
        for topic in request.topics:
            assignments = (
                None
                if topic.assignments is None
                else [tuple(int(b) for b in a.broker_ids) for a in topic.assignments]
            )
            result = await self._controller.create_partitions(
                topic.name,
                int(topic.count),
                bool(request.validate_only),
                assignments,
                _seconds(request.timeout),
            )
            results.append(
                s.CreatePartitionsTopicResult(
                    name=topic.name, error_code=result.error, error_message=result.message
                )
            )
        return s.CreatePartitionsResponse(throttle_time=0, results=tuple(results))

    @api(ApiKeys.ELECT_LEADERS, 0, 2, forward=True)
    async def elect_leaders(self, ctx: RequestContext, request: Any) -> Any:
        """Preferred or (v1+) unclean leader election; null partitions means all of them."""
        s = ctx.schema
        election_type = int(getattr(request, "election_type", 0))
        wanted = (
            None
            if request.topic_partitions is None
            else [(t.topic, int(p)) for t in request.topic_partitions for p in t.partitions]
        )
        results = await self._controller.elect_leaders(
            election_type, wanted, _seconds(request.timeout)
        )
        by_topic: dict[str, list[Any]] = {}
        for topic, index, result in results:
            if wanted is None and result.error != ErrorCode.none:
                continue  # "all partitions": report only the elections that happened
            by_topic.setdefault(topic, []).append(
                s.PartitionResult(
                    partition_id=index, error_code=result.error, error_message=result.message
                )
            )
        return s.ElectLeadersResponse(
            throttle_time=0,
            error_code=ErrorCode.none,
            replica_election_results=tuple(
                s.ReplicaElectionResult(topic=t, partition_result=tuple(ps))
                for t, ps in by_topic.items()
            ),
        )
