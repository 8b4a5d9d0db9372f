"""FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, ListGroups, DescribeGroups.

The classic consumer-group protocol. The logic lives in ``coordinator.group``; these
handlers only translate between kio's versioned messages and it.
"""

from __future__ import annotations

from typing import Any

from kio.schema.delete_groups.v2.request import DeleteGroupsRequest
from kio.schema.describe_groups.v5.request import DescribeGroupsRequest
from kio.schema.find_coordinator.v3.request import FindCoordinatorRequest
from kio.schema.heartbeat.v4.request import HeartbeatRequest
from kio.schema.join_group.v7.request import JoinGroupRequest
from kio.schema.leave_group.v4.request import LeaveGroupRequest
from kio.schema.list_groups.v4.request import ListGroupsRequest
from kio.schema.sync_group.v5.request import SyncGroupRequest

from kafkalite.broker.context import RequestContext
from kafkalite.broker.handlers.registry import api
from kafkalite.broker.internal_topic import InternalTopic
from kafkalite.coordinator.group.coordinator import GroupCoordinator, JoinRequest, JoinResult
from kafkalite.coordinator.partitioning import partition_for
from kafkalite.metadata.image import MetadataImage
from kafkalite.protocol.codec import millis
from kafkalite.protocol.errors import ErrorCode, KafkaError

GROUP_KEY = 0
TRANSACTION_KEY = 1


class GroupApis:
    """Served by the group coordinator; FindCoordinator looks up the leaders of the
    coordinators' internal topics in the metadata image."""

    def __init__(
        self,
        coordinator: GroupCoordinator,
        image: MetadataImage,
        offsets_topic: InternalTopic,
        transaction_state_topic: InternalTopic,
    ) -> None:
        self._coordinator = coordinator
        self._image = image
        self._offsets_topic = offsets_topic
        self._transaction_state_topic = transaction_state_topic

    @api(FindCoordinatorRequest, 0, 3)
    async def find_coordinator(self, ctx: RequestContext, request: Any) -> Any:
        """The leader of the key's partition of ``__consumer_offsets`` (key type 0, a group)
        or ``__transaction_state`` (key type 1, a transactional id), created on first use."""
        s = ctx.schema

        def answer(
            error: ErrorCode,
            node: int = -1,
            host: str = "",
            port: int = -1,
            message: str | None = None,
        ) -> Any:
            return s.FindCoordinatorResponse(
                throttle_time=0,
                error_code=error,
                error_message=message,
                node_id=node,
                host=host,
                port=port,
            )

        key_type = int(getattr(request, "key_type", GROUP_KEY))
        topic: InternalTopic
        if key_type == GROUP_KEY:
            topic = self._offsets_topic
        elif key_type == TRANSACTION_KEY:
            topic = self._transaction_state_topic
        else:
            return answer(ErrorCode.invalid_request, message=f"unknown key type {key_type}")
        await topic.ensure_exists()
        partition = partition_for(request.key, topic.partition_count())
        leader = self._image.partition_leader(topic.name, partition)
        registration = self._image.brokers.get(leader)
        if registration is None or registration.fenced:
            return answer(ErrorCode.coordinator_not_available)
        return answer(ErrorCode.none, leader, registration.host, registration.port)

    @api(JoinGroupRequest, 0, 7)
    async def join_group(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        session_ms = millis(request.session_timeout)
        rebalance = getattr(request, "rebalance_timeout", None)
        try:
            result = await self._coordinator.join(
                JoinRequest(
                    group_id=request.group_id,
                    member_id=request.member_id,
                    group_instance_id=getattr(request, "group_instance_id", None),
                    client_id=ctx.request.client_id or "",
                    client_host=ctx.peer,
                    session_timeout_ms=session_ms,
                    rebalance_timeout_ms=millis(rebalance) if rebalance is not None else session_ms,
                    protocol_type=request.protocol_type,
                    protocols=[(p.name, bytes(p.metadata)) for p in request.protocols],
                    require_known_member_id=ctx.version >= 4,
                )
            )
        except KafkaError as exc:  # not (or no longer) the coordinator: look again
            result = JoinResult(exc.code, member_id=request.member_id)
        return s.JoinGroupResponse(
            throttle_time=0,
            error_code=result.error,
            generation_id=result.generation_id,
            protocol_type=result.protocol_type,
            protocol_name=result.protocol_name or "",
            leader=result.leader,
            member_id=result.member_id,
            members=tuple(
                s.JoinGroupResponseMember(member_id=m, group_instance_id=i, metadata=meta)
                for m, i, meta in result.members
            ),
        )

    @api(SyncGroupRequest, 0, 5)
    async def sync_group(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        coordinator = self._coordinator
        try:
            assignment = await coordinator.sync(
                request.group_id,
                int(request.generation_id),
                request.member_id,
                {a.member_id: bytes(a.assignment) for a in request.assignments},
                getattr(request, "group_instance_id", None),
            )
            error = ErrorCode.none
        except KafkaError as exc:
            assignment, error = b"", exc.code
        group = coordinator.groups.get(request.group_id)
        return s.SyncGroupResponse(
            throttle_time=0,
            error_code=error,
            assignment=assignment,
            protocol_type=group.protocol_type if group else None,
            protocol_name=group.protocol_name if group else None,
        )

    @api(HeartbeatRequest, 0, 4)
    async def heartbeat(self, ctx: RequestContext, request: Any) -> Any:
        try:
            self._coordinator.heartbeat(
                request.group_id,
                int(request.generation_id),
                request.member_id,
                getattr(request, "group_instance_id", None),
            )
            error = ErrorCode.none
        except KafkaError as exc:
            # Kafka answers a heartbeat blindly while the group's partition loads
            loading = exc.code == ErrorCode.coordinator_load_in_progress
            error = ErrorCode.none if loading else exc.code
        return ctx.schema.HeartbeatResponse(throttle_time=0, error_code=error)

    @api(LeaveGroupRequest, 0, 4)
    async def leave_group(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        members = getattr(request, "members", None)
        leaving: list[tuple[str, str | None]] = (
            [(m.member_id, m.group_instance_id) for m in members]
            if members is not None
            else [(request.member_id, None)]
        )
        try:
            results = self._coordinator.leave(request.group_id, leaving)
            error = ErrorCode.none if ctx.version >= 3 else results[0]
        except KafkaError as exc:
            results, error = [exc.code] * len(leaving), exc.code
        return s.LeaveGroupResponse(
            throttle_time=0,
            error_code=error,
            members=tuple(
                s.MemberResponse(member_id=m, group_instance_id=i, error_code=e)
                for (m, i), e in zip(leaving, results, strict=True)
            )
            if s.has_field("LeaveGroupResponse", "members")
            else (),
        )

    @api(ListGroupsRequest, 0, 4)
    async def list_groups(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        wanted = set(getattr(request, "states_filter", ()) or ())
        coordinator = self._coordinator
        loading = coordinator.manager.is_loading()  # Kafka's answer: not all can be listed yet
        groups = [] if loading else coordinator.list_groups()
        groups = [g for g in groups if not wanted or g.state.value in wanted]
        return s.ListGroupsResponse(
            throttle_time=0,
            error_code=ErrorCode.coordinator_load_in_progress if loading else ErrorCode.none,
            groups=tuple(
                s.ListedGroup(
                    group_id=g.group_id,
                    protocol_type=g.protocol_type or "",
                    group_state=g.state.value,
                )
                for g in groups
            ),
        )

    def _describe(self, ctx: RequestContext, group_id: str) -> Any:
        s = ctx.schema
        coordinator = self._coordinator

        def without_members(error: ErrorCode, state: str) -> Any:
            return s.DescribedGroup(
                error_code=error,
                group_id=group_id,
                group_state=state,
                protocol_type="",
                protocol_data="",
                members=(),
            )

        try:
            coordinator.check_coordinator(group_id)
        except KafkaError as exc:
            return without_members(exc.code, "")
        group = coordinator.groups.get(group_id)
        if group is None:
            return without_members(ErrorCode.none, "Dead")
        return s.DescribedGroup(
            error_code=ErrorCode.none,
            group_id=group_id,
            group_state=group.state.value,
            protocol_type=group.protocol_type or "",
            protocol_data=group.protocol_name or "",
            members=tuple(
                s.DescribedGroupMember(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    member_metadata=m.metadata_for(group.protocol_name)
                    if group.protocol_name
                    else b"",
                    member_assignment=m.assignment,
                )
                for m in group.members.values()
            ),
            authorized_operations=-2147483648,
        )

    @api(DescribeGroupsRequest, 0, 5)
    async def describe_groups(self, ctx: RequestContext, request: Any) -> Any:
        return ctx.schema.DescribeGroupsResponse(
            throttle_time=0, groups=tuple(self._describe(ctx, g) for g in request.groups)
        )

    @api(DeleteGroupsRequest, 0, 2)
    async def delete_groups(self, ctx: RequestContext, request: Any) -> Any:
        """DeleteGroups: an empty group and its committed offsets (NON_EMPTY_GROUP otherwise)."""
        s = ctx.schema
        coordinator = self._coordinator
        results = [
            s.DeletableGroupResult(group_id=g, error_code=await coordinator.delete_group(g))
            for g in request.groups_names
        ]
        return s.DeleteGroupsResponse(throttle_time=0, results=tuple(results))
