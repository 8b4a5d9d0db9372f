"""ConsumerGroupHeartbeat (KIP-848) as Kafka's ``GroupMetadataManager`` handles it: one
heartbeat in, the records it changes the group with and the member's answer out. Pure:
the group is read, never changed; the coordinator writes the records and replays them.

A heartbeat does three things, in Kafka's order:

1. the member is created or updated (what it subscribes to, its assignor, its rebalance
   timeout); a change of subscription, of the subscribed topics' partitions, or a new
   group bumps the group epoch;
2. if the group epoch is past the assignment epoch, a new target assignment is computed
   (``target_assignment``);
3. the member is moved one step towards its target (``reconciliation``).

Member epoch 0 joins, -1 leaves, -2 leaves for now (a static member, whose instance id
keeps its partitions until its session runs out). A member answering with an epoch the
coordinator does not know is fenced (FENCED_MEMBER_EPOCH): it must give up its partitions
and join again - except with the epoch just before its current one and no partition it
should not have, as when the answer that moved it on was lost.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from kafkalite.coordinator.group.assignors.spec import PartitionAssignor
from kafkalite.coordinator.group.consumer_group import (
    ConsumerGroup,
    TopicMetadata,
    preferred_assignor,
)
from kafkalite.coordinator.group.consumer_group_records import (
    GroupRecord,
    current_assignment_record,
    group_epoch_record,
    member_metadata_record,
    member_tombstones,
    subscription_metadata_record,
    target_member_record,
)
from kafkalite.coordinator.group.consumer_member import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    Assignment,
    ClassicMemberMetadata,
    ConsumerGroupMember,
    is_subset,
)
from kafkalite.coordinator.group.reconciliation import reconcile
from kafkalite.coordinator.group.target_assignment import build_target_assignment
from kafkalite.protocol.errors import ErrorCode, KafkaError

CONSUMER_GENERATED_MEMBER_ID_VERSION = 1
"""From ConsumerGroupHeartbeat v1 the client makes its member id (KIP-1082)."""


class TopicsView(Protocol):
    """The topics as the broker's metadata image has them."""

    def topic_names(self) -> Iterable[str]: ...

    def describe(self, name: str) -> TopicMetadata | None: ...

    def topic_name(self, topic_id: str) -> str | None: ...


@dataclass(frozen=True, slots=True)
class HeartbeatRequest:
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Assignment | None = None
    """What the member says it holds; None when it did not say."""
    client_id: str = ""
    client_host: str = ""
    classic: ClassicMemberMetadata | None = None
    """A classic member's JoinGroup, taken as a heartbeat (``classic_members``)."""


@dataclass(frozen=True, slots=True)
class HeartbeatOutcome:
    records: list[GroupRecord]
    member_id: str
    member_epoch: int
    assignment: Assignment | None
    """Sent when the member joins, sends everything, or its assignment changed."""
    member: ConsumerGroupMember | None
    """The member after this heartbeat; None once it has left."""
    assignment_changed: bool = False
    """Its reconciliation moved (start or stop its revocation deadline)."""


def validate(request: HeartbeatRequest, version: int, assignors: Iterable[str]) -> None:
    """Kafka's ``throwIfConsumerGroupHeartbeatRequestIsInvalid``."""

    def invalid(message: str) -> KafkaError:
        return KafkaError(ErrorCode.invalid_request, message)

    epoch = request.member_epoch
    if (
        version >= CONSUMER_GENERATED_MEMBER_ID_VERSION
        or epoch > 0
        or epoch == LEAVE_GROUP_MEMBER_EPOCH
    ) and not request.member_id:
        raise invalid("MemberId can't be empty.")
    if not request.group_id:
        raise invalid("GroupId can't be empty.")
    if request.instance_id == "":
        raise invalid("InstanceId can't be empty.")
    if request.rack_id == "":
        raise invalid("RackId can't be empty.")
    if epoch == 0:
        _validate_join(request)
    elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if request.instance_id is None:
            raise invalid("InstanceId can't be null.")
    elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise invalid("MemberEpoch is invalid.")
    offered = list(assignors)
    if request.server_assignor is not None and request.server_assignor not in offered:
        raise KafkaError(
            ErrorCode.unsupported_assignor,
            f"ServerAssignor {request.server_assignor} is not supported. Supported assignors: "
            f"{', '.join(offered)}.",
        )


def _validate_join(request: HeartbeatRequest) -> None:
    """A member joining must say everything about itself."""
    if request.rebalance_timeout_ms == -1:
        raise KafkaError(
            ErrorCode.invalid_request, "RebalanceTimeoutMs must be provided in first request."
        )
    if request.owned is None or request.owned:
        raise KafkaError(
            ErrorCode.invalid_request, "TopicPartitions must be empty when (re-)joining."
        )
    if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
        raise KafkaError(
            ErrorCode.invalid_request,
            "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when "
            "(re-)joining.",
        )


@functools.lru_cache(maxsize=256)
def _compiled(regex: str) -> re.Pattern[str]:
    try:
        return re.compile(regex)
    except re.error as exc:
        raise KafkaError(
            ErrorCode.invalid_regular_expression,
            f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {exc}.",
        ) from exc


def subscribed_topics(member: ConsumerGroupMember, topics: TopicsView) -> set[str]:
    """The topic names a member consumes: those it named, and those its regex matches now.
    (Kafka resolves a regex in the background and tells the member later; here it is
    resolved at each heartbeat, against the same metadata.)"""
    names = set(member.subscribed_topic_names)
    if member.subscribed_topic_regex:
        pattern = _compiled(member.subscribed_topic_regex)
        names.update(n for n in topics.topic_names() if pattern.fullmatch(n))
    return names


def subscription_metadata(
    members: Iterable[ConsumerGroupMember], topics: TopicsView
) -> dict[str, TopicMetadata]:
    """Every topic some member consumes that exists, with its id and partition count."""
    names = set().union(*(subscribed_topics(m, topics) for m in members))
    found = {name: topics.describe(name) for name in sorted(names)}
    return {name: t for name, t in found.items() if t is not None}


def _check_epoch(member: ConsumerGroupMember, epoch: int, owned: Assignment | None) -> None:
    """Kafka's ``throwIfConsumerGroupMemberEpochIsInvalid``."""
    if epoch > member.member_epoch:
        raise KafkaError(
            ErrorCode.fenced_member_epoch,
            f"The consumer group member has a greater member epoch ({epoch}) than the one "
            f"known by the group coordinator ({member.member_epoch}). The member must abandon "
            "all its partitions and rejoin.",
        )
    if epoch < member.member_epoch and (
        epoch != member.previous_member_epoch or not is_subset(owned, member.assigned_partitions)
    ):
        raise KafkaError(
            ErrorCode.fenced_member_epoch,
            f"The consumer group member has a smaller member epoch ({epoch}) than the one "
            f"known by the group coordinator ({member.member_epoch}). The member must abandon "
            "all its partitions and rejoin.",
        )


def _unknown_member(group_id: str, member_id: str) -> KafkaError:
    return KafkaError(
        ErrorCode.unknown_member_id, f"Member {member_id} is not a member of group {group_id}."
    )


def _static_member(group: ConsumerGroup, request: HeartbeatRequest) -> ConsumerGroupMember:
    """The member holding the request's instance id, which must be the request's member."""
    existing = group.static_member(request.instance_id)
    if existing is None:
        raise KafkaError(
            ErrorCode.unknown_member_id, f"Instance id {request.instance_id} is unknown."
        )
    if existing.member_id != request.member_id:
        raise KafkaError(
            ErrorCode.fenced_instance_id,
            f"Static member {request.member_id} with instance id {request.instance_id} was "
            f"fenced by member {existing.member_id}.",
        )
    return existing


def _member(
    group: ConsumerGroup, request: HeartbeatRequest, records: list[GroupRecord]
) -> ConsumerGroupMember:
    """The member the heartbeat is from, new when it joins. A static member rejoining
    under a new member id takes the place (and partitions) of its instance's previous
    member, if that one left for now - or at once if either speaks the classic protocol,
    whose restarted static member cannot say it left (Kafka's
    ``getOrMaybeSubscribe*ConsumerGroupMember``)."""
    joining = request.member_epoch == 0
    if request.instance_id is None:
        member = group.members.get(request.member_id)
        if member is None:
            if not joining:
                raise _unknown_member(group.group_id, request.member_id)
            member = ConsumerGroupMember(request.member_id)
        _check_epoch(member, request.member_epoch, request.owned)
        return member
    if not joining:
        static = _static_member(group, request)
        _check_epoch(static, request.member_epoch, request.owned)
        return static
    existing = group.static_member(request.instance_id)
    if existing is None:
        return group.members.get(request.member_id) or ConsumerGroupMember(request.member_id)
    classic = request.classic is not None or existing.uses_classic_protocol
    if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH and not classic:
        raise KafkaError(
            ErrorCode.unreleased_instance_id,
            f"Static member {request.member_id} with instance id {request.instance_id} cannot "
            f"join the group because the instance id is owned by {existing.member_id} member.",
        )
    replacement = replace(
        existing, member_id=request.member_id, member_epoch=0, previous_member_epoch=0
    )
    records.extend(member_tombstones(group.group_id, existing.member_id))
    records.append(member_metadata_record(group.group_id, replacement))
    records.append(current_assignment_record(group.group_id, replacement))
    records.append(
        target_member_record(group.group_id, request.member_id, group.target_of(existing.member_id))
    )
    return replacement


def heartbeat(
    group: ConsumerGroup | None,
    request: HeartbeatRequest,
    topics: TopicsView,
    assignors: Mapping[str, PartitionAssignor],
    max_size: int,
) -> HeartbeatOutcome:
    """A regular heartbeat (member epoch 0 or above); ``group`` is None if it does not
    exist. ``assignors`` are the offered ones, the first the default."""
    group_id, epoch = request.group_id, request.member_epoch
    if group is None:
        if epoch != 0:
            raise KafkaError(ErrorCode.group_id_not_found, f"Consumer group {group_id} not found.")
        group = ConsumerGroup(group_id)
    if len(group.members) >= max_size and request.member_id not in group.members:
        raise KafkaError(
            ErrorCode.group_max_size_reached,
            f"The consumer group has reached its maximum capacity of {max_size} members.",
        )
    records: list[GroupRecord] = []
    member = _member(group, request, records)

    # 1. the member as it is now, and the group epoch
    updated = replace(
        member,
        instance_id=request.instance_id or member.instance_id,
        rack_id=request.rack_id or member.rack_id,
        rebalance_timeout_ms=request.rebalance_timeout_ms
        if request.rebalance_timeout_ms != -1
        else member.rebalance_timeout_ms,
        server_assignor=request.server_assignor or member.server_assignor,
        subscribed_topic_names=tuple(sorted(request.subscribed_topic_names))
        if request.subscribed_topic_names is not None
        else member.subscribed_topic_names,
        subscribed_topic_regex=request.subscribed_topic_regex
        if request.subscribed_topic_regex is not None
        else member.subscribed_topic_regex,
        client_id=request.client_id,
        client_host=request.client_host,
        classic=request.classic or member.classic,
    )
    subscription_changed = False
    if updated != member:
        records.append(member_metadata_record(group_id, updated))
        subscription_changed = (
            updated.subscribed_topic_names != member.subscribed_topic_names
            or updated.subscribed_topic_regex != member.subscribed_topic_regex
        )
        if updated.subscribed_topic_regex != member.subscribed_topic_regex:
            subscribed_topics(updated, topics)  # an invalid regex is refused now
    members = dict(group.members)
    replaced = group.static_members.get(updated.instance_id) if updated.instance_id else None
    if replaced is not None and replaced != updated.member_id:
        del members[replaced]
    members[updated.member_id] = updated
    metadata = subscription_metadata(members.values(), topics)
    group_epoch = group.group_epoch
    bump = group_epoch == 0 or subscription_changed
    if metadata != group.subscription_metadata:
        records.append(subscription_metadata_record(group_id, metadata))
        bump = True
    if bump:
        group_epoch += 1
        records.append(group_epoch_record(group_id, group_epoch))

    # 2. the target assignment
    if group_epoch > group.assignment_epoch:
        default = next(iter(assignors))
        assignor = assignors.get(preferred_assignor(members.values(), default), assignors[default])
        built = build_target_assignment(
            group,
            group_epoch,
            assignor,
            members,
            lambda m: subscribed_topics(m, topics),
            metadata,
        )
        records.extend(built.records)
        target_epoch, target = group_epoch, built.members.get(updated.member_id, {})
    else:
        target_epoch = group.assignment_epoch
        target = group.target_of(updated.member_id, updated.instance_id)

    # 3. one step of reconciliation
    reconciled = updated
    if not updated.is_reconciled_to(target_epoch):
        reconciled = reconcile(updated, target_epoch, target, group.partition_epoch, request.owned)
    changed = reconciled != updated
    if changed:
        records.append(current_assignment_record(group_id, reconciled))
    full = (
        request.rebalance_timeout_ms != -1
        and (
            request.subscribed_topic_names is not None or request.subscribed_topic_regex is not None
        )
        and request.owned is not None
    )
    assigned_changed = reconciled.assigned_partitions != member.assigned_partitions
    return HeartbeatOutcome(
        records,
        reconciled.member_id,
        reconciled.member_epoch,
        reconciled.assigned_partitions if epoch == 0 or full or assigned_changed else None,
        reconciled,
        changed,
    )


def fence(group: ConsumerGroup, member_id: str, topics: TopicsView) -> list[GroupRecord]:
    """Remove a member (it left, its session or rebalance timeout ran out) and bump the
    group epoch, so that its partitions are reassigned (Kafka's ``consumerGroupFenceMember``)."""
    records = member_tombstones(group.group_id, member_id)
    others = [m for mid, m in group.members.items() if mid != member_id]
    metadata = subscription_metadata(others, topics)
    if metadata != group.subscription_metadata:
        records.append(subscription_metadata_record(group.group_id, metadata))
    records.append(group_epoch_record(group.group_id, group.group_epoch + 1))
    return records


def leave(
    group: ConsumerGroup | None, request: HeartbeatRequest, topics: TopicsView
) -> HeartbeatOutcome:
    """Member epoch -1 (leave) or -2 (a static member leaves for now: its epoch becomes -2
    and it keeps its partitions, unconsumed, until its session runs out or its instance
    rejoins). Kafka's ``consumerGroupLeave``."""
    if group is None:
        raise KafkaError(
            ErrorCode.group_id_not_found, f"Consumer group {request.group_id} not found."
        )
    if request.instance_id is None:
        member = group.members.get(request.member_id)
        if member is None:
            raise _unknown_member(group.group_id, request.member_id)
    else:
        member = _static_member(group, request)
    if request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        away = replace(
            member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, partitions_pending_revocation={}
        )
        records = [current_assignment_record(group.group_id, away)]
        return HeartbeatOutcome(records, request.member_id, request.member_epoch, None, away)
    records = fence(group, member.member_id, topics)
    return HeartbeatOutcome(records, request.member_id, request.member_epoch, None, None)
