"""FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, ListGroups, DescribeGroups.

The classic consumer-group protocol (and the listing and finding of every group). The
logic lives in ``coordinator.group``; these handlers only translate between kio's versioned
messages and it. DescribeGroups describes classic groups only: a consumer group (KIP-848)
is GROUP_ID_NOT_FOUND there (v6; Dead before), as in Kafka, and described by
ConsumerGroupDescribe (``consumer_groups``).

What the newer versions change, as in Kafka 4.0: FindCoordinator v4+ looks up a batch of
keys at once (KIP-699); JoinGroup v8 and LeaveGroup v5 carry the client's reason
(KIP-800), JoinGroup v9 answers ``skip_assignment`` (always false: the leader assigns in a
classic group); ListGroups v5 filters by group type and answers each group's type;
DescribeGroups v6 answers GROUP_ID_NOT_FOUND for a group that does not exist (KIP-1043),
where older versions describe it as Dead.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.data_plane.internal_topic import InternalTopic
from kafkalite.broker.handler_registry import api
from kafkalite.coordinator.group.coordinator import GroupCoordinator
from kafkalite.coordinator.group.group import GroupState
from kafkalite.coordinator.group.join_group import JoinRequest, JoinResult
from kafkalite.coordinator.partitioning import partition_for
from kafkalite.metadata.image import MetadataImage
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.codec import (
    EncodedResponse,
    encode_body,
    frame_with_body,
    millis,
    response_schema,
)
from kafkalite.protocol.errors import ErrorCode, KafkaError

GROUP_KEY = 0
TRANSACTION_KEY = 1
SHARE_KEY = 2
BATCHED_FIND_COORDINATOR_VERSION = 4  # KIP-699: a list of keys, one answer each
CLASSIC = "classic"
"""The type ListGroups v5 gives a group of the classic protocol (Kafka's ``GroupType``)."""
CONSUMER = "consumer"
"""The type (and protocol type) of a KIP-848 consumer group."""


@dataclass(frozen=True, slots=True)
class CoordinatorLocation:
    """Where one key's coordinator is, or why it cannot be told."""

    error: ErrorCode
    node_id: int = -1
    host: str = ""
    port: int = -1
    message: str | None = None


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

    async def _locate(self, key_type: int, key: str) -> CoordinatorLocation:
        """The leader of the key's partition of ``__consumer_offsets`` (key type 0, a group)
        or ``__transaction_state`` (key type 1, a transactional id), created on first use.
        Share groups (key type 2, KIP-932) have no coordinator here."""
        topic: InternalTopic
        if key_type == GROUP_KEY:
            topic = self._offsets_topic
        elif key_type == TRANSACTION_KEY:
            topic = self._transaction_state_topic
        elif key_type == SHARE_KEY:
            message = "share groups (KIP-932) are not supported by Kafka-Lite"
            return CoordinatorLocation(ErrorCode.invalid_request, message=message)
        else:
            message = f"unknown key type {key_type}"
            return CoordinatorLocation(ErrorCode.invalid_request, message=message)
        await topic.ensure_exists()
        partition = partition_for(key, topic.partition_count())
        leader = self._image.partition_leader(topic.name, partition)
        registration = self._image.brokers.get(leader)
        if registration is None or registration.fenced:
            return CoordinatorLocation(ErrorCode.coordinator_not_available)
        return CoordinatorLocation(ErrorCode.none, leader, registration.host, registration.port)

    @api(ApiKeys.FIND_COORDINATOR, 0, 6)
    async def find_coordinator(self, ctx: RequestContext, request: Any) -> Any:
        """One key (v0-3) or a batch of them (v4+), all of the request's key type."""
        s = ctx.schema
        key_type = int(getattr(request, "key_type", GROUP_KEY))
        if ctx.version < BATCHED_FIND_COORDINATOR_VERSION:
            found = await self._locate(key_type, request.key)
            return s.FindCoordinatorResponse(
                throttle_time=0,
                error_code=found.error,
                error_message=found.message,
                node_id=found.node_id,
                host=found.host,
                port=found.port,
            )
        coordinators = []
        for key in request.coordinator_keys:
            found = await self._locate(key_type, key)
            coordinators.append(
                s.Coordinator(
                    key=key,
                    node_id=found.node_id,
                    host=found.host,
                    port=found.port,
                    error_code=found.error,
                    error_message=found.message,
                )
            )
        return s.FindCoordinatorResponse(throttle_time=0, coordinators=tuple(coordinators))

    @api(ApiKeys.JOIN_GROUP, 0, 9)
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
                    reason=getattr(request, "reason", None),
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
            skip_assignment=False,
            member_id=result.member_id,
            members=tuple(
                s.JoinGroupResponseMember(member_id=m, group_instance_id=i, metadata=meta)
                for m, i, meta in result.members
            ),
        )

    @api(ApiKeys.SYNC_GROUP, 0, 5)
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

    @api(ApiKeys.HEARTBEAT, 0, 4)
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
        body = _heartbeat_answer(ctx.version, error)
        frame = frame_with_body(ApiKeys.HEARTBEAT, ctx.version, ctx.request.correlation_id, body)
        return EncodedResponse([frame])

    @api(ApiKeys.LEAVE_GROUP, 0, 5)
    async def leave_group(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        members = getattr(request, "members", None)
        leaving: list[tuple[str, str | None]] = (
            [(m.member_id, m.group_instance_id) for m in members]
            if members is not None
            else [(request.member_id, None)]
        )
        reasons = [getattr(m, "reason", None) for m in members or ()]
        try:
            results = self._coordinator.leave(request.group_id, leaving, reasons)
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

    @api(ApiKeys.LIST_GROUPS, 0, 5)
    async def list_groups(self, ctx: RequestContext, request: Any) -> Any:
        """Classic and consumer (KIP-848) groups, filtered by state (v4+, case-insensitive
        as in Kafka) and by type (v5+; an unknown type matches nothing)."""
        s = ctx.schema
        states = {f.strip().lower() for f in getattr(request, "states_filter", ()) or ()}
        types = {f.strip().lower() for f in getattr(request, "types_filter", ()) or ()}
        coordinator = self._coordinator
        loading = coordinator.manager.is_loading()  # Kafka's answer: not all can be listed yet
        listed: list[tuple[str, str, str, str]] = []  # id, protocol type, state, group type
        if not loading:
            listed = [
                (g.group_id, g.protocol_type or "", g.state.value, CLASSIC)
                for g in coordinator.list_groups()
            ] + [
                (g.group_id, CONSUMER, g.state.value, CONSUMER)
                for g in coordinator.manager.consumer_groups.values()
            ]
        return s.ListGroupsResponse(
            throttle_time=0,
            error_code=ErrorCode.coordinator_load_in_progress if loading else ErrorCode.none,
            groups=tuple(
                s.ListedGroup(
                    group_id=group_id,
                    protocol_type=protocol_type,
                    group_state=state,
                    group_type=group_type,
                )
                for group_id, protocol_type, state, group_type in sorted(listed)
                if (not states or state.lower() in states) and (not types or group_type in types)
            ),
        )

    def _describe(self, ctx: RequestContext, group_id: str) -> Any:
        """Kafka's ``describeGroups``: a Stable group with each member's metadata and
        assignment; in any other state the members without them (they are being
        renegotiated). A group that does not exist is Dead, and from v6 on also
        GROUP_ID_NOT_FOUND."""
        s = ctx.schema
        coordinator = self._coordinator

        def without_members(error: ErrorCode, state: str, message: str | None = None) -> Any:
            return s.DescribedGroup(
                error_code=error,
                error_message=message,
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
        if group is None or group.state == GroupState.DEAD:
            if ctx.version >= 6:
                message = (
                    f"Group {group_id} is not a classic group."
                    if group_id in coordinator.manager.consumer_groups
                    else f"Group {group_id} not found."
                )
                return without_members(ErrorCode.group_id_not_found, "Dead", message)
            return without_members(ErrorCode.none, "Dead")
        stable = group.state == GroupState.STABLE and group.protocol_name is not None
        return s.DescribedGroup(
            error_code=ErrorCode.none,
            group_id=group_id,
            group_state=group.state.value,
            protocol_type=group.protocol_type or "",
            protocol_data=group.protocol_name if stable else "",
            members=tuple(
                s.DescribedGroupMember(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    member_metadata=m.metadata_for(group.protocol_name)
                    if stable and group.protocol_name
                    else b"",
                    member_assignment=m.assignment if stable else b"",
                )
                for m in group.members.values()
            ),
            authorized_operations=-2147483648,
        )

    @api(ApiKeys.DESCRIBE_GROUPS, 0, 6)
    async def describe_groups(self, ctx: RequestContext, request: Any) -> Any:
        return ctx.schema.DescribeGroupsResponse(
            throttle_time=0, groups=tuple(self._describe(ctx, g) for g in request.groups)
        )

    @api(ApiKeys.DELETE_GROUPS, 0, 2)
    async def delete_groups(self, ctx: RequestContext, request: Any) -> Any:
        """DeleteGroups: an empty group and its committed offsets (NON_EMPTY_GROUP otherwise)."""
        s = ctx.schema
        coordinator = self._coordinator
        results = [
            s.DeletableGroupResult(group_id=g, error_code=await coordinator.delete_group(g))
            for g in request.groups_names
        ]
        return s.DeleteGroupsResponse(throttle_time=0, results=tuple(results))


@cache
def _heartbeat_answer(version: int, error: ErrorCode) -> bytes:
    """A Heartbeat's answer body, encoded by kio once per version and error code: it
    carries nothing else (no throttling here), and building and writing kio's objects
    for it cost more than the rest of the request."""
    schema = response_schema(ApiKeys.HEARTBEAT, version)
    return encode_body(schema.HeartbeatResponse(throttle_time=0, error_code=error))
