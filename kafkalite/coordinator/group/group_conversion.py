"""How the coordinator changes a group's protocol while it has members (KIP-848's online
upgrade and downgrade): ``group_migration`` computes the other kind of group and its
records (pure); this module decides when, applies them, and tells.

A consumer-protocol member's heartbeat to a classic group makes way for a consumer group
(``make_way_for_consumer_group``), and a classic member's JoinGroup to an empty consumer
group makes way for a classic one (``make_way_for_classic_group``). When the last member of
the consumer protocol leaves, is fenced (``classic_group_without``) or is replaced by a
classic static member (``downgrade_with_replaced_member``), the group becomes classic,
as ``group.consumer.migration.policy`` allows (``validate_online_downgrade``), and the
classic coordinator takes it over (``install_classic_group``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from kafkalite.coordinator.group.consumer_group import ConsumerGroup
from kafkalite.coordinator.group.consumer_group_config import ConsumerGroupConfig
from kafkalite.coordinator.group.consumer_group_heartbeat import (
    HeartbeatOutcome,
    HeartbeatRequest,
    TopicsView,
)
from kafkalite.coordinator.group.consumer_group_records import GroupRecord, group_tombstones
from kafkalite.coordinator.group.consumer_member import ConsumerGroupMember
from kafkalite.coordinator.group.group import Group, GroupState
from kafkalite.coordinator.group.group_migration import (
    CONSUMER_PROTOCOL_TYPE,
    UnreadableClassicGroupError,
    all_members_use_classic_protocol_except,
    downgrade,
    upgrade,
    upgrade_refusal,
)
from kafkalite.coordinator.group.join_group import JoinRequest, JoinResult
from kafkalite.coordinator.group.member_timers import MemberTimers
from kafkalite.coordinator.group.metadata_manager import GroupMetadataManager
from kafkalite.events import EventSink, EventType
from kafkalite.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)


class GroupConversion:
    """The consumer group coordinator's protocol changes, over its groups and timers."""

    def __init__(
        self,
        manager: GroupMetadataManager,
        topics: TopicsView,
        config: ConsumerGroupConfig,
        now_ms: Callable[[], int],
        emit: EventSink,
        timers: MemberTimers,
        end_classic_rebalance: Callable[[str], None],
    ) -> None:
        self.manager = manager
        self.topics = topics
        self.config = config
        self.now_ms = now_ms
        self.emit = emit
        self.timers = timers
        self.end_classic_rebalance = end_classic_rebalance
        """Answer the JoinGroups and SyncGroups a classic group holds (it is upgraded)."""

    def make_way_for_consumer_group(
        self, request: HeartbeatRequest
    ) -> tuple[list[GroupRecord], ConsumerGroup | None]:
        """A member joins a group id a classic group holds. An empty one (or one that only
        holds offsets) gives way, its record deleted (Kafka's ``maybeDeleteEmptyClassicGroup``);
        one with members is converted, online, if ``group.consumer.migration.policy`` allows
        (Kafka's ``validateOnlineUpgrade`` and ``convertToConsumerGroup``): its parked
        JoinGroups and SyncGroups are told to rejoin, and the records returned make it a
        consumer group (returned too, as it will be once they are applied). Otherwise the
        heartbeat gets GROUP_ID_NOT_FOUND, as in Kafka."""
        group_id = request.group_id
        classic = self.manager.groups.get(group_id)
        if classic is None:
            return [], None
        if not classic.members and classic.state == GroupState.EMPTY:
            log.info("group %s: the empty classic group becomes a consumer group", group_id)
            return [({"type": "group", "group": group_id}, None)], None
        refusal = "a member must join with epoch 0" if request.member_epoch != 0 else None
        refusal = refusal or upgrade_refusal(
            classic, self.config.migration_policy(), self.config.max_size()
        )
        upgraded = None
        if refusal is None:
            try:
                upgraded, records = upgrade(classic, self.topics)
            except UnreadableClassicGroupError as exc:
                refusal = str(exc)
        if upgraded is None:
            log.info(
                "group %s: cannot upgrade the classic group to a consumer group: %s",
                group_id,
                refusal,
            )
            raise KafkaError(
                ErrorCode.group_id_not_found, f"Group {group_id} is not a consumer group."
            )
        log.info(
            "group %s: the classic group (generation %d, %d members) becomes a consumer group",
            group_id,
            classic.generation_id,
            len(classic.members),
        )
        self.end_classic_rebalance(group_id)
        self.emit(
            EventType.GROUP_PROTOCOL_CHANGED,
            group=group_id,
            protocol="consumer",
            epoch=classic.generation_id,
            members=sorted(classic.members),
        )
        return records, upgraded

    async def make_way_for_classic_group(self, group_id: str) -> None:
        """A classic member joins a group id an empty consumer group holds: it gives way, its
        records deleted (Kafka's ``maybeDeleteEmptyConsumerGroup``)."""
        group = self.manager.consumer_groups.get(group_id)
        if group is not None and not group.members:
            await self.manager.write(group_id, group_tombstones(group_id))

    def validate_online_downgrade(
        self, group: ConsumerGroup, member_id: str, *, replaced: bool
    ) -> bool:
        """Whether the group becomes classic when ``member_id``, its last member of the
        consumer protocol, leaves or is fenced (some member must remain: Kafka's
        ``validateOnlineDowngradeWithFencedMember``) or is ``replaced`` by a classic static
        member (``validateOnlineDowngradeWithReplacedMemberId``), as
        ``group.consumer.migration.policy`` allows. (Kafka also refuses a group larger than
        ``group.max.size``; classic groups have no size limit here.)"""
        if not all_members_use_classic_protocol_except(group, member_id):
            return False
        if not replaced and len(group.members) <= 1:
            return False  # the group empties: there is nothing to convert
        if not self.config.migration_policy().downgrade_enabled:
            log.info(
                "group %s: cannot downgrade the consumer group to a classic group: online "
                "downgrade is disabled (group.consumer.migration.policy)",
                group.group_id,
            )
            return False
        return True

    def classic_group_without(
        self, group: ConsumerGroup, leaving: str
    ) -> tuple[Group | None, list[GroupRecord]]:
        """``leaving`` goes: if only classic members remain and the policy allows, the
        classic group the consumer group becomes, and the records of that; else nothing."""
        if not self.validate_online_downgrade(group, leaving, replaced=False):
            return None, []
        classic, records = downgrade(group, leaving, self.topics, self.now_ms())
        log.info(
            "group %s: its last member of the consumer protocol left; the group becomes "
            "classic at generation %d and rebalances",
            group.group_id,
            classic.generation_id,
        )
        return classic, records

    def install_classic_group(self, classic: Group, rebalance: bool = True) -> None:
        """The downgraded group replaces the consumer group (whose records ``apply`` just
        deleted); the classic coordinator times its members' sessions from now on. With
        ``rebalance`` every classic member rejoins."""
        self.manager.groups[classic.group_id] = classic
        self.timers.forget_group(classic.group_id)
        if rebalance:
            classic.prepare_rebalance(self.now_ms())
        self.emit(
            EventType.GROUP_PROTOCOL_CHANGED,
            group=classic.group_id,
            protocol="classic",
            epoch=classic.generation_id,
            members=sorted(classic.members),
        )

    async def downgrade_with_replaced_member(
        self,
        group: ConsumerGroup,
        replaced: ConsumerGroupMember,
        outcome: HeartbeatOutcome,
        request: JoinRequest,
    ) -> JoinResult:
        """A classic static member took the place of the group's last member of the
        consumer protocol (same instance id, whether that one left for now, crashed or is
        still running): the group becomes classic at once, the newcomer in it with the
        partitions it replaced (Kafka 4.0's ``classicGroupJoinToConsumerGroup`` step 4).
        The classic group is stable, its generation the group epoch, and the JoinGroup
        answer names no leader: the newcomer's SyncGroup gets its partitions, and no other
        member is disturbed. If the newcomer subscribes to other topics, the classic group
        rebalances at once and the answer's generation is 0, the newcomer not being
        reconciled (KAFKA-19546, merged for Kafka 4.0.2)."""
        group_id = group.group_id
        joining = outcome.member
        assert joining is not None  # a JoinGroup never removes its member
        subscription_changed = joining.subscribed_topic_names != replaced.subscribed_topic_names
        classic, records = downgrade(
            group, replaced.member_id, self.topics, self.now_ms(), joining=joining
        )
        records = [*outcome.records, *records]
        partition = self.manager.apply(group_id, records)
        log.info(
            "group %s: classic static member %s (instance %s) replaced %s, the last member of "
            "the consumer protocol; the group becomes classic at generation %d%s",
            group_id,
            joining.member_id,
            joining.instance_id,
            replaced.member_id,
            classic.generation_id,
            " and rebalances (another subscription)" if subscription_changed else "",
        )
        self.install_classic_group(classic, rebalance=subscription_changed)
        await self.manager.persist(partition, records)
        return JoinResult(
            ErrorCode.none,
            0 if subscription_changed else outcome.member_epoch,
            CONSUMER_PROTOCOL_TYPE,
            request.protocols[0][0],
            "",
            joining.member_id,
        )
