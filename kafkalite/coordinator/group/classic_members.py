"""Members of the classic protocol inside a consumer group (KIP-848's migration path, as
Kafka 4.0's ``GroupMetadataManager`` runs them): JoinGroup, SyncGroup and Heartbeat
translated into the consumer group's terms. Pure: the group is read, never changed.

* A JoinGroup is a consumer-group heartbeat with everything in it: the subscription and
  the partitions the client still owns come from its JoinGroup metadata, and the member
  moves one step towards its target assignment, computed by the server-side assignor.
  Its answer names no leader (the client assigns nothing) and carries the member epoch
  as the generation.
* A SyncGroup returns the partitions the member may consume now, in its own format.
* A Heartbeat answers REBALANCE_IN_PROGRESS when the member must join again to move on:
  the group epoch has passed its epoch, it must give partitions up, or partitions it
  waits for have been released. That is how a classic client, which knows nothing of
  epochs, follows an incremental rebalance: one JoinGroup per step.

A classic member's generation must be its member epoch exactly (ILLEGAL_GENERATION
otherwise), as in Kafka.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafkalite.coordinator.group.assignors.spec import PartitionAssignor
from kafkalite.coordinator.group.consumer_group import ConsumerGroup
from kafkalite.coordinator.group.consumer_group_heartbeat import (
    HeartbeatOutcome,
    HeartbeatRequest,
    TopicsView,
    heartbeat,
)
from kafkalite.coordinator.group.consumer_member import (
    ClassicMemberMetadata,
    ConsumerGroupMember,
    MemberState,
    assignment,
)
from kafkalite.coordinator.group.consumer_protocol import (
    Subscription,
    read_subscription,
    write_assignment,
)
from kafkalite.coordinator.group.group_migration import CONSUMER_PROTOCOL_TYPE, named_partitions
from kafkalite.coordinator.group.join_group import JoinRequest
from kafkalite.protocol.errors import ErrorCode, KafkaError


def join(
    group: ConsumerGroup,
    member_id: str,
    request: JoinRequest,
    topics: TopicsView,
    assignors: Mapping[str, PartitionAssignor],
    max_size: int,
) -> HeartbeatOutcome:
    """A classic member's JoinGroup (Kafka's ``classicGroupJoinToConsumerGroup``):
    ``member_id`` is its id, a new one if it had none."""
    subscription = _subscription(request)
    existing = group.members.get(member_id)
    if existing is not None and not existing.uses_classic_protocol:
        raise _not_classic(member_id)
    owned = assignment(
        (described.topic_id, partitions)
        for name, partitions in subscription.owned_partitions
        if (described := topics.describe(name)) is not None
    )
    as_heartbeat = HeartbeatRequest(
        request.group_id,
        member_id,
        existing.member_epoch if existing is not None else 0,
        instance_id=request.group_instance_id,
        rack_id=subscription.rack_id,
        rebalance_timeout_ms=request.rebalance_timeout_ms,
        subscribed_topic_names=subscription.topics,
        owned=owned,
        client_id=request.client_id,
        client_host=request.client_host,
        classic=ClassicMemberMetadata(request.session_timeout_ms, tuple(request.protocols)),
    )
    return heartbeat(group, as_heartbeat, topics, assignors, max_size)


def _subscription(request: JoinRequest) -> Subscription:
    """Kafka's ``throwIfClassicProtocolIsNotSupported`` and ``deserializeSubscription``."""
    if request.protocol_type != CONSUMER_PROTOCOL_TYPE or not request.protocols:
        raise KafkaError(
            ErrorCode.inconsistent_group_protocol,
            f"Member {request.member_id or '(new)'} of group {request.group_id} must use the "
            "consumer embedded protocol to join a consumer group.",
        )
    for _, metadata in request.protocols:
        subscription = read_subscription(metadata)
        if subscription is not None:
            return subscription
    raise KafkaError(
        ErrorCode.inconsistent_group_protocol,
        f"Member {request.member_id or '(new)'}'s subscription cannot be read.",
    )


def member(
    group: ConsumerGroup, member_id: str, instance_id: str | None, generation_id: int
) -> ConsumerGroupMember:
    """The classic member a SyncGroup, Heartbeat or OffsetCommit comes from, at its
    generation (Kafka's ``validateConsumerGroupMember``, ``throwIfMemberDoesNotUseClassic
    Protocol`` and ``throwIfGenerationIdUnmatched``)."""
    if instance_id is None:
        found = group.members.get(member_id)
        if found is None:
            raise KafkaError(
                ErrorCode.unknown_member_id,
                f"Member {member_id} is not a member of group {group.group_id}.",
            )
    else:
        found = group.static_member(instance_id)
        if found is None:
            raise KafkaError(ErrorCode.unknown_member_id, f"Instance id {instance_id} is unknown.")
        if found.member_id != member_id:
            raise KafkaError(
                ErrorCode.fenced_instance_id,
                f"Static member {member_id} with instance id {instance_id} was fenced by "
                f"member {found.member_id}.",
            )
    if not found.uses_classic_protocol:
        raise _not_classic(member_id)
    if generation_id != found.member_epoch:
        raise KafkaError(
            ErrorCode.illegal_generation,
            f"The member {member_id} is at generation {found.member_epoch}, not {generation_id}.",
        )
    return found


def _not_classic(member_id: str) -> KafkaError:
    return KafkaError(
        ErrorCode.unknown_member_id, f"Member {member_id} does not use the classic protocol."
    )


def sync(
    group: ConsumerGroup,
    member_id: str,
    instance_id: str | None,
    generation_id: int,
    topics: TopicsView,
) -> bytes:
    """A classic member's SyncGroup (Kafka's ``classicGroupSyncToConsumerGroup``): the
    partitions it may consume now, in the version of its subscription."""
    found = member(group, member_id, instance_id, generation_id)
    if group.group_epoch > found.member_epoch and found.state != MemberState.UNREVOKED_PARTITIONS:
        raise KafkaError(
            ErrorCode.rebalance_in_progress,
            f"A new rebalance is triggered in group {group.group_id}: member {member_id} "
            "should rejoin to catch up.",
        )
    assert found.classic is not None
    subscription = read_subscription(found.classic.protocols[0][1])
    named = named_partitions(found.assigned_partitions, topics)
    return write_assignment(subscription.version if subscription else 0, named)


def must_rejoin(group: ConsumerGroup, member: ConsumerGroupMember) -> bool:
    """Kafka's ``classicGroupHeartbeatToConsumerGroup``: the member rejoins (its heartbeat
    gets REBALANCE_IN_PROGRESS) when the group epoch is past its epoch, when it must revoke
    partitions, or when the partitions it waits for are free now."""
    return (
        member.member_epoch < group.group_epoch
        or member.state == MemberState.UNREVOKED_PARTITIONS
        or (
            member.state == MemberState.UNRELEASED_PARTITIONS
            and not _waits_on_unreleased(group, member)
        )
    )


def _waits_on_unreleased(group: ConsumerGroup, member: ConsumerGroupMember) -> bool:
    """Some partition of its target is still held by another member (Kafka's
    ``waitingOnUnreleasedPartition``)."""
    target = group.target_of(member.member_id, member.instance_id)
    return any(
        group.partition_epoch(topic_id, p) != -1
        for topic_id, partitions in target.items()
        for p in partitions - member.assigned_partitions.get(topic_id, frozenset())
    )
