"""What brokers ask their controller, on the controller listener: BrokerRegistration,
BrokerHeartbeat, AllocateProducerIds and AlterPartition (Kafka's ``ControllerApis``).

The admin requests clients send (CreateTopics, DeleteTopics, CreatePartitions, the config
changes, ElectLeaders) arrive here when a broker forwards them; they are served by the
same handlers as on the client listener.
"""

from __future__ import annotations

from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.control_plane.controller_service import ControllerService
from kafkalite.broker.control_plane_api import NotControllerError
from kafkalite.broker.handler_registry import controller_api
from kafkalite.controller.producer_id_control import PRODUCER_ID_BLOCK_SIZE
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.errors import ErrorCode


class ControllerApis:
    """Served by this broker's controller service, on the control plane (Kafka's
    ``ControllerApis``); a broker that is not the active controller answers
    NOT_CONTROLLER."""

    def __init__(self, service: ControllerService) -> None:
        self._service = service

    @controller_api(ApiKeys.BROKER_REGISTRATION, 0, 0)
    async def broker_registration(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        listener = request.listeners[0]
        try:
            epoch = await self._service.register_broker(
                int(request.broker_id),
                listener.host,
                int(listener.port),
                request.rack,
                str(request.incarnation_id),
            )
        except NotControllerError:
            return s.BrokerRegistrationResponse(
                throttle_time=0, error_code=ErrorCode.not_controller, broker_epoch=-1
            )
        self._service.watch_connection(ctx.connection, int(request.broker_id), epoch)
        return s.BrokerRegistrationResponse(
            throttle_time=0, error_code=ErrorCode.none, broker_epoch=epoch
        )

    @controller_api(ApiKeys.BROKER_HEARTBEAT, 0, 0)
    async def broker_heartbeat(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        self._service.watch_connection(
            ctx.connection, int(request.broker_id), int(request.broker_epoch)
        )
        try:
            reply = await self._service.heartbeat(
                int(request.broker_id),
                int(request.broker_epoch),
                int(request.current_metadata_offset),
                bool(request.want_fence),
                bool(request.want_shut_down),
            )
        except NotControllerError:
            return s.BrokerHeartbeatResponse(
                throttle_time=0,
                error_code=ErrorCode.not_controller,
                is_caught_up=False,
                is_fenced=True,
                should_shut_down=False,
            )
        return s.BrokerHeartbeatResponse(
            throttle_time=0,
            error_code=reply.error,
            is_caught_up=reply.is_caught_up,
            is_fenced=reply.is_fenced,
            should_shut_down=reply.should_shut_down,
        )

    @controller_api(ApiKeys.ALLOCATE_PRODUCER_IDS, 0, 0)
    async def allocate_producer_ids(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        try:
            start = await self._service.allocate_producer_ids(
                int(request.broker_id), int(request.broker_epoch)
            )
        except NotControllerError:
            return s.AllocateProducerIdsResponse(
                throttle_time=0,
                error_code=ErrorCode.not_controller,
                producer_id_start=-1,
                producer_id_len=0,
            )
        return s.AllocateProducerIdsResponse(
            throttle_time=0,
            error_code=ErrorCode.none,
            producer_id_start=start,
            producer_id_len=PRODUCER_ID_BLOCK_SIZE,
        )

    @controller_api(ApiKeys.ALTER_PARTITION, 2, 2)
    async def alter_partition(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        image = self._service.image  # on the control plane: the controller's
        topics = []
        top_error = ErrorCode.none
        for t in request.topics:
            topic = image.topics_by_id.get(str(t.topic_id))
            partitions = []
            for p in t.partitions:
                if topic is None:
                    error, registration = ErrorCode.unknown_topic_id, None
                else:
                    try:
                        reply = await self._service.alter_partition(
                            int(request.broker_id),
                            int(request.broker_epoch),
                            topic.name,
                            int(p.partition_index),
                            int(p.leader_epoch),
                            int(p.partition_epoch),
                            tuple(int(b) for b in p.new_isr),
                        )
                        error, registration = reply.error, reply.registration
                    except NotControllerError:
                        top_error, error, registration = (
                            ErrorCode.not_controller,
                            ErrorCode.none,
                            None,
                        )
                partitions.append(
                    s.PartitionData(
                        partition_index=p.partition_index,
                        error_code=error,
                        leader_id=registration.leader if registration else -1,
                        leader_epoch=registration.leader_epoch if registration else -1,
                        isr=registration.isr if registration else (),
                        leader_recovery_state=0,
                        partition_epoch=registration.partition_epoch if registration else -1,
                    )
                )
            topics.append(s.TopicData(topic_id=t.topic_id, partitions=tuple(partitions)))
        return s.AlterPartitionResponse(throttle_time=0, error_code=top_error, topics=tuple(topics))
