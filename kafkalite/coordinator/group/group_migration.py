"""Online migration between the two group protocols (KIP-848's upgrade and downgrade, as
Kafka 4.0's ``GroupMetadataManager`` does it), as plain functions of the groups.

A classic group whose members use the consumer embedded protocol (``protocol_type``
``consumer``) becomes a consumer group when a member of the consumer protocol joins it
(``ConsumerGroup.fromClassicGroup``): every classic member is kept, at the classic
generation as its member epoch, with the partitions its leader last assigned it as both
its current and its target assignment, so nobody stops consuming; the classic members
then go on with JoinGroup, SyncGroup and Heartbeat, and the coordinator's server-side
assignor assigns them. When the last member of the consumer protocol leaves (or is fenced)
and only classic members remain, the group becomes classic again
(``ClassicGroup.fromConsumerGroup``) at the group epoch as its generation, and a rebalance
starts so that its members share the partitions among themselves again. So it does at once
when that last member is static and a classic member joins with its ``group.instance.id``
(a consumer restarted with the classic protocol): the newcomer takes the replaced member's
place and partitions in the classic group, which stays stable - no rebalance unless the
newcomer subscribes to other topics (Kafka 4.0's ``classicGroupJoinToConsumerGroup``).

``group.consumer.migration.policy`` allows either way (``bidirectional``, Kafka 4.0's
default), one (``upgrade``, ``downgrade``) or neither (``disabled``: a consumer-protocol
member cannot join a classic group with members, GROUP_ID_NOT_FOUND). Committed offsets
belong to the group id, not to either kind of group: they are kept across both changes.
"""

from __future__ import annotations

import enum

from kafkalite.coordinator.group.consumer_group import ConsumerGroup
from kafkalite.coordinator.group.consumer_group_heartbeat import (
    TopicsView,
    subscription_metadata,
)
from kafkalite.coordinator.group.consumer_group_records import (
    GroupRecord,
    current_assignment_record,
    group_epoch_record,
    group_tombstones,
    member_metadata_record,
    member_tombstones,
    replay,
    subscription_metadata_record,
    target_epoch_record,
    target_member_record,
)
from kafkalite.coordinator.group.consumer_member import (
    Assignment,
    ClassicMemberMetadata,
    ConsumerGroupMember,
    MemberState,
    assignment,
)
from kafkalite.coordinator.group.consumer_protocol import (
    assigned_partitions,
    read_subscription,
    write_assignment,
)
from kafkalite.coordinator.group.group import Group, GroupState, Member
from kafkalite.coordinator.group.offsets_log import group_value

CONSUMER_PROTOCOL_TYPE = "consumer"


class MigrationPolicy(enum.Enum):
    """``group.consumer.migration.policy`` (Kafka's ``ConsumerGroupMigrationPolicy``)."""

    DISABLED = "disabled"
    UPGRADE = "upgrade"
    DOWNGRADE = "downgrade"
    BIDIRECTIONAL = "bidirectional"

    @property
    def upgrade_enabled(self) -> bool:
        return self in (MigrationPolicy.UPGRADE, MigrationPolicy.BIDIRECTIONAL)

    @property
    def downgrade_enabled(self) -> bool:
        return self in (MigrationPolicy.DOWNGRADE, MigrationPolicy.BIDIRECTIONAL)


class UnreadableClassicGroupError(ValueError):
    """A member's subscription is not the consumer protocol's: the group cannot convert."""


def upgrade_refusal(classic: Group, policy: MigrationPolicy, max_size: int) -> str | None:
    """Why a classic group with members cannot become a consumer group now (Kafka's
    ``validateOnlineUpgrade``); None when it can."""
    if not policy.upgrade_enabled:
        return "online upgrade is disabled (group.consumer.migration.policy)"
    if classic.protocol_type != CONSUMER_PROTOCOL_TYPE:
        return "the group does not use the consumer embedded protocol"
    if len(classic.members) > max_size:
        return "the group size exceeds the consumer group maximum size"
    return None


def upgrade(classic: Group, topics: TopicsView) -> tuple[ConsumerGroup, list[GroupRecord]]:
    """The consumer group ``classic`` becomes, and the records that say so: the classic
    group's tombstone, then each member with its classic metadata and last assignment
    (current and target, at the generation as epoch), the subscribed topics and the epochs
    (Kafka's ``fromClassicGroup`` and ``createConsumerGroupRecords``). Raises
    ``UnreadableClassicGroupError`` if a member's metadata is not the consumer protocol's."""
    group_id, generation = classic.group_id, classic.generation_id
    members = [_consumer_member(classic, m, topics) for m in classic.members.values()]
    records: list[GroupRecord] = [({"type": "group", "group": group_id}, None)]
    records.extend(member_metadata_record(group_id, m) for m in members)
    records.append(group_epoch_record(group_id, generation))
    records.append(subscription_metadata_record(group_id, subscription_metadata(members, topics)))
    records.extend(
        target_member_record(group_id, m.member_id, m.assigned_partitions) for m in members
    )
    records.append(target_epoch_record(group_id, generation))
    records.extend(current_assignment_record(group_id, m) for m in members)
    upgraded: dict[str, ConsumerGroup] = {}
    for key, value in records[1:]:
        replay(upgraded, key, value)
    return upgraded[group_id], records


def _consumer_member(classic: Group, member: Member, topics: TopicsView) -> ConsumerGroupMember:
    protocol = classic.protocol_name or member.protocols[0][0]
    subscription = read_subscription(member.metadata_for(protocol))
    if subscription is None:
        raise UnreadableClassicGroupError(
            f"member {member.member_id}'s subscription is not the consumer protocol's"
        )
    by_id: dict[str, list[int]] = {}
    for topic, partition in assigned_partitions(member.assignment):
        described = topics.describe(topic)
        if described is not None:  # a deleted topic's partitions are dropped, as in Kafka
            by_id.setdefault(described.topic_id, []).append(partition)
    return ConsumerGroupMember(
        member.member_id,
        member_epoch=classic.generation_id,
        previous_member_epoch=classic.generation_id,
        state=MemberState.STABLE,
        instance_id=member.group_instance_id,
        rack_id=subscription.rack_id,
        client_id=member.client_id,
        client_host=member.client_host,
        subscribed_topic_names=tuple(sorted(subscription.topics)),
        rebalance_timeout_ms=member.rebalance_timeout_ms,
        assigned_partitions=assignment(by_id.items()),
        classic=ClassicMemberMetadata(member.session_timeout_ms, tuple(member.protocols)),
    )


def all_members_use_classic_protocol_except(group: ConsumerGroup, member_id: str) -> bool:
    """``member_id`` speaks the consumer protocol and every other member the classic one
    (Kafka's ``ConsumerGroup.allMembersUseClassicProtocolExcept``): without it, the group
    would be all classic."""
    member = group.members.get(member_id)
    return (
        member is not None
        and not member.uses_classic_protocol
        and all(m.uses_classic_protocol for mid, m in group.members.items() if mid != member_id)
    )


def downgrade(
    group: ConsumerGroup,
    leaving: str,
    topics: TopicsView,
    now_ms: int,
    joining: ConsumerGroupMember | None = None,
) -> tuple[Group, list[GroupRecord]]:
    """The classic group that ``group`` becomes when ``leaving`` goes and only classic
    members remain, and the records that say so: every consumer-group record deleted, then
    the classic group's. Its generation is the group epoch; each member's assignment is its
    target assignment, written in the version of its subscription (Kafka's
    ``convertToClassicGroup`` and ``ClassicGroup.fromConsumerGroup``).

    ``joining`` is the classic static member that replaces ``leaving`` (same instance id),
    whose JoinGroup records already moved ``leaving``'s place to it: it joins the classic
    group with ``leaving``'s target assignment, and its own records are the ones deleted.
    The caller starts a rebalance when a member left, not when one was replaced."""
    group_id = group.group_id
    joining_id = None if joining is None else joining.member_id
    classic = Group(group_id, GroupState.STABLE, group.group_epoch)
    members = [m for member_id, m in group.members.items() if member_id != leaving]
    for m in [*members, *([joining] if joining is not None else [])]:
        if m.classic is None:
            continue
        classic.add_member(
            Member(
                m.member_id,
                m.client_id,
                m.client_host,
                m.classic.session_timeout_ms,
                m.rebalance_timeout_ms,
                list(m.classic.protocols),
                m.instance_id,
                last_heartbeat_ms=now_ms,
            ),
            CONSUMER_PROTOCOL_TYPE,
        )
    classic.protocol_name = classic.select_protocol()
    for member_id, member in classic.members.items():
        metadata = member.metadata_for(classic.protocol_name)
        subscription = read_subscription(metadata)
        holder = leaving if member_id == joining_id else member_id
        member.assignment = write_assignment(
            subscription.version if subscription else 0,
            named_partitions(group.target_of(holder), topics),
        )
    records: list[GroupRecord] = []
    for member_id in group.members:
        removed = joining_id if joining_id is not None and member_id == leaving else member_id
        records.extend(member_tombstones(group_id, removed))
    records.extend(group_tombstones(group_id))
    records.append(({"type": "group", "group": group_id}, group_value(classic)))
    return classic, records


def named_partitions(partitions: Assignment, topics: TopicsView) -> dict[str, list[int]]:
    """Partitions by topic name (a topic no longer known is left out)."""
    named: dict[str, list[int]] = {}
    for topic_id, ps in partitions.items():
        name = topics.topic_name(topic_id)
        if name is not None:
            named[name] = sorted(ps)
    return named
