"""ConsumerGroupHeartbeat and ConsumerGroupDescribe: the KIP-848 consumer group protocol
(``group.protocol=consumer``), Kafka 4.0's default for new consumers.

The logic lives in ``coordinator.group`` (``consumer_coordinator`` and the modules it
drives); these handlers translate between kio's versioned messages and it. Partitions
travel by topic id; a heartbeat's ``topic_partitions`` is what the member holds (null:
unchanged since its last heartbeat). v1 (KIP-1082) has the client make its member id and
adds regular-expression subscriptions; v1 of ConsumerGroupDescribe says each member's type.
"""

from __future__ import annotations

import uuid
from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.handler_registry import api
from kafkalite.coordinator.group.consumer_group_heartbeat import HeartbeatRequest
from kafkalite.coordinator.group.consumer_member import (
    Assignment,
    ConsumerGroupMember,
    assignment,
)
from kafkalite.coordinator.group.coordinator import GroupCoordinator
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.codec import millis
from kafkalite.protocol.errors import ErrorCode, KafkaError

CLASSIC_MEMBER, CONSUMER_MEMBER = 0, 1
"""ConsumerGroupDescribe v1's member types: a classic member of the group (KIP-848's
migration), a member of the consumer protocol."""


class ConsumerGroupApis:
    """Served by the group coordinator."""

    def __init__(self, coordinator: GroupCoordinator) -> None:
        self._coordinator = coordinator

    @api(ApiKeys.CONSUMER_GROUP_HEARTBEAT, 0, 1)
    async def consumer_group_heartbeat(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        owned = request.topic_partitions
        names = request.subscribed_topic_names
        beat = HeartbeatRequest(
            group_id=request.group_id,
            member_id=request.member_id,
            member_epoch=int(request.member_epoch),
            instance_id=request.instance_id,
            rack_id=request.rack_id,
            rebalance_timeout_ms=millis(request.rebalance_timeout),
            subscribed_topic_names=None if names is None else tuple(names),
            subscribed_topic_regex=getattr(request, "subscribed_topic_regex", None),
            server_assignor=request.server_assignor,
            owned=None
            if owned is None
            else assignment((str(t.topic_id), [int(p) for p in t.partitions]) for t in owned),
            client_id=ctx.request.client_id or "",
            client_host=ctx.peer,
        )
        try:
            answer = await self._coordinator.consumer.heartbeat(beat, ctx.version)
        except KafkaError as exc:
            return s.ConsumerGroupHeartbeatResponse(
                throttle_time=0,
                error_code=exc.code,
                error_message=exc.message,
                member_epoch=0,
                heartbeat_interval=0,
            )
        return s.ConsumerGroupHeartbeatResponse(
            throttle_time=0,
            error_code=ErrorCode.none,
            member_id=answer.member_id,
            member_epoch=answer.member_epoch,
            heartbeat_interval=answer.heartbeat_interval_ms,
            assignment=None
            if answer.assignment is None
            else s.Assignment(topic_partitions=_topic_partitions(s, answer.assignment)),
        )

    @api(ApiKeys.CONSUMER_GROUP_DESCRIBE, 0, 1)
    async def consumer_group_describe(self, ctx: RequestContext, request: Any) -> Any:
        return ctx.schema.ConsumerGroupDescribeResponse(
            throttle_time=0, groups=tuple(self._describe(ctx, g) for g in request.group_ids)
        )

    def _describe(self, ctx: RequestContext, group_id: str) -> Any:
        """Kafka's ``ConsumerGroup.asDescribedGroup``: each member's current and target
        assignment, with topic names; GROUP_ID_NOT_FOUND for a classic group (an admin
        client then asks DescribeGroups) or none."""
        s = ctx.schema
        consumer = self._coordinator.consumer
        try:
            group = consumer.group(group_id)
        except KafkaError as exc:
            return s.DescribedGroup(
                error_code=exc.code,
                error_message=exc.message,
                group_id=group_id,
                group_state="",
                group_epoch=-1,
                assignment_epoch=-1,
                assignor_name="",
                members=(),
            )

        def described(partitions: Assignment) -> Any:
            return s.Assignment(
                topic_partitions=tuple(
                    s.TopicPartitions(topic_id=uuid.UUID(t), topic_name=name, partitions=tuple(ps))
                    for t, name, ps in consumer.describe_names(partitions)
                )
            )

        def member_type(m: ConsumerGroupMember) -> dict[str, int]:
            if ctx.version < 1:
                return {}
            return {"member_type": CLASSIC_MEMBER if m.uses_classic_protocol else CONSUMER_MEMBER}

        return s.DescribedGroup(
            error_code=ErrorCode.none,
            group_id=group_id,
            group_state=group.state.value,
            group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch,
            assignor_name=consumer.assignor_of(group),
            members=tuple(
                s.Member(
                    member_id=m.member_id,
                    instance_id=m.instance_id,
                    rack_id=m.rack_id,
                    member_epoch=m.member_epoch,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    subscribed_topic_names=m.subscribed_topic_names,
                    subscribed_topic_regex=m.subscribed_topic_regex or None,
                    assignment=described(m.assigned_partitions),
                    target_assignment=described(group.target_of(m.member_id)),
                    **member_type(m),
                )
                for m in group.members.values()
            ),
        )


def _topic_partitions(s: Any, partitions: Assignment) -> tuple[Any, ...]:
    return tuple(
        s.TopicPartitions(topic_id=uuid.UUID(topic_id), partitions=tuple(sorted(ps)))
        for topic_id, ps in sorted(partitions.items())
    )
