"""Produce: append each partition's batches on its leader and answer per ``acks``.

``acks=0`` gets no response at all; ``acks=1`` is answered after the leader's append;
``acks=all`` (-1) waits until the high watermark passes the batch, i.e. every in-sync
replica has it, or the request's timeout expires (REQUEST_TIMED_OUT).

The internal topics (``__consumer_offsets``, ``__transaction_state``) are written by the
coordinators only: a client's Produce to them gets INVALID_TOPIC_EXCEPTION, as in Kafka.
A student's stray record there would otherwise be replayed by every coordinator that
loads the partition. The one exception is Kafka's too: a client whose client id is
``__admin_client`` (Kafka's ``AdminUtils.ADMIN_CLIENT_ID``, its ``internalTopicsAllowed``)
may write them, which is how a tool (or a test) puts records of Kafka's own format there
on purpose.

Produce v10 tells where the leader is when this broker is not it (KIP-951, see
``leader_discovery``); v11 may answer TRANSACTION_ABORTABLE where older versions get
INVALID_TXN_STATE (KIP-890).
"""

from __future__ import annotations

from typing import Any

from kio.schema.produce.v11.request import ProduceRequest

from kafkalite.broker.context import RequestContext
from kafkalite.broker.handlers import leader_discovery
from kafkalite.broker.handlers.leader_discovery import LeaderDiscovery
from kafkalite.broker.handlers.registry import api
from kafkalite.broker.replica_manager import ProduceResult, ReplicaManager
from kafkalite.controller.topic_control import INTERNAL_TOPICS
from kafkalite.metadata.image import MetadataImage
from kafkalite.protocol.codec import millis
from kafkalite.protocol.errors import ErrorCode

VALID_ACKS = (-1, 0, 1)
ADMIN_CLIENT_ID = "__admin_client"
"""The client id Kafka lets write the internal topics (``AdminUtils.ADMIN_CLIENT_ID``)."""


class ProduceApi:
    """Appends through the replica manager, which also waits for the acks; a refused
    partition's current leader is read from the metadata image."""

    def __init__(self, replicas: ReplicaManager, image: MetadataImage) -> None:
        self._replicas = replicas
        self._image = image

    @api(ProduceRequest, 3, 11)
    async def produce(self, ctx: RequestContext, request: Any) -> Any:
        replicas = self._replicas
        acks = int(request.acks)
        internal_topics_allowed = ctx.request.client_id == ADMIN_CLIENT_ID
        results: list[tuple[str, int, ProduceResult]] = []
        for topic in request.topic_data:
            for part in topic.partition_data:
                if acks not in VALID_ACKS:
                    result = ProduceResult(ErrorCode.invalid_required_acks)
                elif topic.name in INTERNAL_TOPICS and not internal_topics_allowed:
                    result = ProduceResult(
                        ErrorCode.invalid_topic_exception,
                        message=f"Cannot append to internal topic {topic.name}",
                    )
                else:
                    result = replicas.append_to_leader(
                        topic.name, int(part.index), part.records, acks
                    )
                results.append((topic.name, int(part.index), result))
        if acks == 0:
            return None
        if acks == -1:
            await replicas.wait_for_acks(results, millis(request.timeout) / 1000)
        return self._response(ctx, results)

    def _response(self, ctx: RequestContext, results: list[tuple[str, int, ProduceResult]]) -> Any:
        s = ctx.schema
        leaders = LeaderDiscovery(self._image)
        discover = ctx.version >= leader_discovery.PRODUCE_VERSION
        no_leader = s.LeaderIdAndEpoch(leader_id=-1, leader_epoch=-1) if discover else None
        by_topic: dict[str, list[Any]] = {}
        for topic, index, r in results:
            refused = discover and r.error == ErrorCode.not_leader_or_follower
            by_topic.setdefault(topic, []).append(
                s.PartitionProduceResponse(
                    index=index,
                    error_code=r.error,
                    base_offset=r.base_offset,
                    log_append_time=r.log_append_time_ms,
                    log_start_offset=r.log_start_offset,
                    record_errors=(),
                    error_message=r.message,
                    current_leader=leaders.current_leader(s, topic, index)
                    if refused
                    else no_leader,
                )
            )
        return s.ProduceResponse(
            responses=tuple(
                s.TopicProduceResponse(name=name, partition_responses=tuple(parts))
                for name, parts in by_topic.items()
            ),
            throttle_time=0,
            node_endpoints=leaders.node_endpoints(s) if discover else (),
        )
