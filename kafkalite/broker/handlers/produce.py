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
"""

from __future__ import annotations

from typing import Any

from kio.schema.produce.v9.request import ProduceRequest

from kafkalite.broker.context import RequestContext
from kafkalite.broker.handlers.registry import api
from kafkalite.broker.replica_manager import ProduceResult, ReplicaManager
from kafkalite.controller.topic_control import INTERNAL_TOPICS
from kafkalite.protocol.codec import millis
from kafkalite.protocol.errors import ErrorCode

VALID_ACKS = (-1, 0, 1)
ADMIN_CLIENT_ID = "__admin_client"
"""The client id Kafka lets write the internal topics (``AdminUtils.ADMIN_CLIENT_ID``)."""


class ProduceApi:
    """Appends through the replica manager, which also waits for the acks."""

    def __init__(self, replicas: ReplicaManager) -> None:
        self._replicas = replicas

    @api(ProduceRequest, 3, 9)
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
        return _response(ctx, results)


def _response(ctx: RequestContext, results: list[tuple[str, int, ProduceResult]]) -> Any:
    s = ctx.schema
    by_topic: dict[str, list[Any]] = {}
    for topic, index, r in results:
        by_topic.setdefault(topic, []).append(
            s.PartitionProduceResponse(
                index=index,
                error_code=r.error,
                base_offset=r.base_offset,
                log_append_time=r.log_append_time_ms,
                log_start_offset=r.log_start_offset,
                record_errors=(),
                error_message=r.message,
            )
        )
    return s.ProduceResponse(
        responses=tuple(
            s.TopicProduceResponse(name=name, partition_responses=tuple(parts))
            for name, parts in by_topic.items()
        ),
        throttle_time=0,
    )
