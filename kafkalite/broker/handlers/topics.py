"""CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders: forwarded to the controller.

Validation (names, partition counts, replication factor against live brokers, configs)
happens in the controller, so every broker gives the same answer to the same request.
"""

from __future__ import annotations

from typing import Any

from kio.schema.create_partitions.v3.request import CreatePartitionsRequest
from kio.schema.create_topics.v5.request import CreateTopicsRequest
from kio.schema.delete_topics.v4.request import DeleteTopicsRequest
from kio.schema.elect_leaders.v2.request import ElectLeadersRequest

from kafkalite.broker.context import RequestContext
from kafkalite.broker.controller_channel import ControllerChannel
from kafkalite.broker.handlers.registry import api
from kafkalite.controller.topic_control import CreatableTopic
from kafkalite.metadata.image import MetadataImage
from kafkalite.protocol.codec import millis
from kafkalite.protocol.errors import ErrorCode


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


class TopicApis:
    """Served by the controller (forwarded to it); CreateTopics describes the new topics'
    configs from the metadata image."""

    def __init__(self, controller: ControllerChannel, image: MetadataImage) -> None:
        self._controller = controller
        self._image = image

    @api(CreateTopicsRequest, 2, 5, forward=True)
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
            results.append(
                s.CreatableTopicResult(
                    name=c.name,
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

    @api(DeleteTopicsRequest, 1, 4, forward=True)
    async def delete_topics(self, ctx: RequestContext, request: Any) -> Any:
        deleted = await self._controller.delete_topics(
            list(request.topic_names), _seconds(request.timeout)
        )
        s = ctx.schema
        return s.DeleteTopicsResponse(
            throttle_time=0,
            responses=tuple(
                s.DeletableTopicResult(name=n, error_code=r.error, error_message=r.message)
                for n, r in deleted
            ),
        )

    @api(CreatePartitionsRequest, 0, 3, forward=True)
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

    @api(ElectLeadersRequest, 0, 2, forward=True)
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
