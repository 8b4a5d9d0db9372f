"""The coordinator of KIP-848 consumer groups: heartbeats in, records written, timers kept.

``consumer_group_heartbeat`` decides (pure); this module applies the decision to the
coordinator's memory, writes it to ``__consumer_offsets`` before answering, and keeps the
two timers of each member, as Kafka's coordinator does:

* its session (``group.consumer.session.timeout.ms``, or the group's
  ``consumer.session.timeout.ms``): restarted by every heartbeat; when it runs out the
  member is fenced and its partitions go to the others;
* its revocation deadline (its rebalance timeout, the client's ``max.poll.interval.ms``):
  started when it is asked to give partitions up; if it is still at that epoch when the
  deadline passes, it is fenced.

After a failover the new coordinator starts every member's session afresh, as Kafka's does
when it loads a partition. Classic and consumer groups share the coordinator and the group
id space: an empty group of one kind gives way to the other; a classic group with members
becomes a consumer group when a member of the consumer protocol joins, and back when the
last one leaves or is replaced by a classic static member (``group_migration``, as
``group.consumer.migration.policy`` allows), and meanwhile its classic members are served
through JoinGroup, SyncGroup and Heartbeat
(``classic_members``), with a third timer: the rebalance timeout to rejoin once told to,
and to send SyncGroup once joined.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from kafkalite.coordinator.group import classic_members
from kafkalite.coordinator.group.assignors import ASSIGNORS
from kafkalite.coordinator.group.assignors.spec import PartitionAssignor
from kafkalite.coordinator.group.consumer_group import ConsumerGroup, preferred_assignor
from kafkalite.coordinator.group.consumer_group_heartbeat import (
    HeartbeatOutcome,
    HeartbeatRequest,
    TopicsView,
    fence,
    heartbeat,
    leave,
    validate,
)
from kafkalite.coordinator.group.consumer_group_records import (
    TARGET_ASSIGNMENT_METADATA,
    GroupRecord,
    group_tombstones,
)
from kafkalite.coordinator.group.consumer_member import (
    Assignment,
    ConsumerGroupMember,
    MemberState,
)
from kafkalite.coordinator.group.group import Group, GroupState
from kafkalite.coordinator.group.group_migration import (
    CONSUMER_PROTOCOL_TYPE,
    MigrationPolicy,
    UnreadableClassicGroupError,
    all_members_use_classic_protocol_except,
    downgrade,
    upgrade,
    upgrade_refusal,
)
from kafkalite.coordinator.group.join_group import JoinRequest, JoinResult
from kafkalite.coordinator.group.metadata_manager import GroupMetadataManager
from kafkalite.events import EventSink, EventType
from kafkalite.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)
OFFSET_COMMIT_MIN_VERSION = 9
"""A member of a consumer group commits with OffsetCommit v9 or later (its member epoch)."""


@dataclass(frozen=True, slots=True)
class ConsumerGroupConfig:
    session_timeout_ms: Callable[[str], int]
    """Of a group: its ``consumer.session.timeout.ms``, else the broker's."""
    heartbeat_interval_ms: Callable[[str], int]
    assignors: Callable[[], list[str]]
    """``group.consumer.assignors``: the offered ones, the first the default."""
    max_size: Callable[[], int]
    migration_policy: Callable[[], MigrationPolicy] = lambda: MigrationPolicy.BIDIRECTIONAL
    """``group.consumer.migration.policy``: may groups change protocols with members in."""


@dataclass(frozen=True, slots=True)
class HeartbeatAnswer:
    member_id: str
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: Assignment | None


class ConsumerGroupCoordinator:
    def __init__(
        self,
        manager: GroupMetadataManager,
        topics: TopicsView,
        config: ConsumerGroupConfig,
        now_ms: Callable[[], int],
        emit: EventSink,
        end_classic_rebalance: Callable[[str], None] = lambda group_id: None,
    ) -> None:
        self.manager = manager
        self.end_classic_rebalance = end_classic_rebalance
        """Answer the JoinGroups and SyncGroups a classic group holds (it is upgraded)."""
        self.topics = topics
        self.config = config
        self.now_ms = now_ms
        self.emit = emit
        self._sessions: dict[tuple[str, str], int] = {}
        """(group, member) -> when its session runs out."""
        self._revocations: dict[tuple[str, str], tuple[int, int]] = {}
        """(group, member) -> (the epoch it must leave, by when)."""
        self._classic_deadlines: dict[tuple[str, str], tuple[int, str]] = {}
        """(group, classic member) -> by when it must send its JoinGroup (once told to
        rejoin) or its SyncGroup (once joined), and why it is fenced if it does not:
        Kafka's join and sync timeouts, both the member's rebalance timeout."""
        self._writes: set[asyncio.Task[None]] = set()

    @property
    def groups(self) -> dict[str, ConsumerGroup]:
        return self.manager.consumer_groups

    def assignor_of(self, group: ConsumerGroup) -> str:
        """The server assignor the group's next target assignment will use."""
        return preferred_assignor(group.members.values(), next(iter(self._assignors())))

    def _assignors(self) -> dict[str, PartitionAssignor]:
        offered = {name: ASSIGNORS[name] for name in self.config.assignors() if name in ASSIGNORS}
        return offered or dict(ASSIGNORS)

    async def stop(self) -> None:
        for task in list(self._writes):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # ---- heartbeats ----------------------------------------------------------------

    async def heartbeat(self, request: HeartbeatRequest, version: int) -> HeartbeatAnswer:
        assignors = self._assignors()
        validate(request, version, assignors)
        group_id = request.group_id
        self.manager.check_coordinator(group_id)
        records, upgraded = self._make_way_for_consumer_group(request)
        group = upgraded or self.groups.get(group_id)
        classic = None
        if request.member_epoch < 0:
            outcome = leave(group, request, self.topics)
            if group is not None and outcome.member is None:
                classic, downgrade_records = self._downgrade(group, outcome.member_id)
                outcome = replace(outcome, records=downgrade_records or outcome.records)
        else:
            outcome = heartbeat(group, request, self.topics, assignors, self.config.max_size())
        records.extend(outcome.records)
        partition = self.manager.apply(group_id, records)
        self._after(group_id, outcome)
        if classic is not None:
            self._install_classic_group(classic)
        await self.manager.persist(partition, records)
        return HeartbeatAnswer(
            outcome.member_id,
            outcome.member_epoch,
            self.config.heartbeat_interval_ms(group_id),
            outcome.assignment,
        )

    def _make_way_for_consumer_group(
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
        group = self.groups.get(group_id)
        if group is not None and not group.members:
            await self.manager.write(group_id, group_tombstones(group_id))

    def _validate_online_downgrade(
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

    def _downgrade(
        self, group: ConsumerGroup, leaving: str
    ) -> tuple[Group | None, list[GroupRecord]]:
        """``leaving`` goes: if only classic members remain and the policy allows, the
        classic group the consumer group becomes, and the records of that; else nothing."""
        if not self._validate_online_downgrade(group, leaving, replaced=False):
            return None, []
        classic, records = downgrade(group, leaving, self.topics, self.now_ms())
        log.info(
            "group %s: its last member of the consumer protocol left; the group becomes "
            "classic at generation %d and rebalances",
            group.group_id,
            classic.generation_id,
        )
        return classic, records

    def _install_classic_group(self, classic: Group, rebalance: bool = True) -> None:
        """The downgraded group replaces the consumer group (whose records ``apply`` just
        deleted); the classic coordinator times its members' sessions from now on. With
        ``rebalance`` every classic member rejoins."""
        self.manager.groups[classic.group_id] = classic
        timed = (*self._sessions, *self._revocations, *self._classic_deadlines)
        for key in [k for k in timed if k[0] == classic.group_id]:
            self._forget_member(key)
        if rebalance:
            classic.prepare_rebalance(self.now_ms())
        self.emit(
            EventType.GROUP_PROTOCOL_CHANGED,
            group=classic.group_id,
            protocol="classic",
            epoch=classic.generation_id,
            members=sorted(classic.members),
        )

    def _after(self, group_id: str, outcome: HeartbeatOutcome) -> None:
        """Restart the member's session, start or stop its revocation deadline, and tell."""
        key = (group_id, outcome.member_id)
        member = outcome.member
        now = self.now_ms()
        if member is None:
            self._forget_member(key)
            self.emit(
                EventType.GROUP_MEMBER_REMOVED,
                group=group_id,
                member=outcome.member_id,
                reason="left",
            )
        else:
            self._sessions[key] = now + self._session_ms(group_id, member)
            if outcome.assignment_changed:
                if member.state == MemberState.UNREVOKED_PARTITIONS:
                    deadline = now + max(member.rebalance_timeout_ms, 0)
                    self._revocations[key] = (member.member_epoch, deadline)
                else:
                    self._revocations.pop(key, None)
        group = self.groups.get(group_id)
        if group is not None and any(
            k["type"] == TARGET_ASSIGNMENT_METADATA for k, _ in outcome.records
        ):
            self.emit(
                EventType.CONSUMER_GROUP_ASSIGNMENT_COMPUTED,
                group=group_id,
                epoch=group.assignment_epoch,
                assignment={
                    m: self.partition_names(a) for m, a in sorted(group.target_assignment.items())
                },
            )
        if member is not None and outcome.assignment_changed:
            self.emit(
                EventType.CONSUMER_GROUP_MEMBER_RECONCILED,
                group=group_id,
                client_id=member.client_id,
                member=member.member_id,
                member_epoch=member.member_epoch,
                state=member.state.value,
                assigned=self.partition_names(member.assigned_partitions),
                revoking=self.partition_names(member.partitions_pending_revocation),
            )

    def _forget_member(self, key: tuple[str, str]) -> None:
        self._sessions.pop(key, None)
        self._revocations.pop(key, None)
        self._classic_deadlines.pop(key, None)

    def _session_ms(self, group_id: str, member: ConsumerGroupMember) -> int:
        """A classic member keeps the session timeout of its JoinGroup."""
        if member.classic is not None:
            return member.classic.session_timeout_ms
        return self.config.session_timeout_ms(group_id)

    def partition_names(self, partitions: Assignment) -> list[str]:
        """``topic-partition`` names, in order (a topic id no longer known stays an id)."""
        return sorted(
            f"{self.topics.topic_name(topic_id) or topic_id}-{p}"
            for topic_id, ps in partitions.items()
            for p in ps
        )

    # ---- classic members (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) -------------------

    async def classic_join(self, group: ConsumerGroup, request: JoinRequest) -> JoinResult:
        """A classic member joins (or rejoins) a consumer group: one step of its
        reconciliation, written before the answer, as a heartbeat's."""
        group_id = group.group_id
        member_id = request.member_id
        if not member_id:
            member_id = str(uuid.uuid4())
            if request.require_known_member_id and request.group_instance_id is None:
                return JoinResult(ErrorCode.member_id_required, member_id=member_id)
        try:
            outcome = classic_members.join(
                group, member_id, request, self.topics, self._assignors(), self.config.max_size()
            )
        except KafkaError as exc:
            log.info("group %s: classic member %s refused: %s", group_id, member_id, exc)
            return JoinResult(exc.code, member_id=member_id)
        replaced = group.static_member(request.group_instance_id)
        if replaced is not None and self._validate_online_downgrade(
            group, replaced.member_id, replaced=True
        ):
            return await self._downgrade_with_replaced_member(group, replaced, outcome, request)
        partition = self.manager.apply(group_id, outcome.records)
        self._after(group_id, outcome)
        deadline = self.now_ms() + max(request.rebalance_timeout_ms, 0)
        self._classic_deadlines[(group_id, member_id)] = (deadline, "did not sync in time")
        await self.manager.persist(partition, outcome.records)
        return JoinResult(
            ErrorCode.none,
            outcome.member_epoch,
            CONSUMER_PROTOCOL_TYPE,
            request.protocols[0][0],
            "",
            member_id,
        )

    async def _downgrade_with_replaced_member(
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
        self._install_classic_group(classic, rebalance=subscription_changed)
        await self.manager.persist(partition, records)
        return JoinResult(
            ErrorCode.none,
            0 if subscription_changed else outcome.member_epoch,
            CONSUMER_PROTOCOL_TYPE,
            request.protocols[0][0],
            "",
            joining.member_id,
        )

    def classic_sync(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None, generation_id: int
    ) -> bytes:
        assignment = classic_members.sync(group, member_id, instance_id, generation_id, self.topics)
        self._restart_session(group.group_id, member_id)
        self._classic_deadlines.pop((group.group_id, member_id), None)
        return assignment

    def classic_heartbeat(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None, generation_id: int
    ) -> None:
        """A classic member's Heartbeat: its session starts over; REBALANCE_IN_PROGRESS
        when it must rejoin, and then it has its rebalance timeout to do so."""
        member = classic_members.member(group, member_id, instance_id, generation_id)
        self._restart_session(group.group_id, member_id)
        if classic_members.must_rejoin(group, member):
            deadline = self.now_ms() + max(member.rebalance_timeout_ms, 0)
            self._classic_deadlines.setdefault(
                (group.group_id, member_id), (deadline, "did not rejoin in time")
            )
            raise KafkaError(ErrorCode.rebalance_in_progress)

    def _restart_session(self, group_id: str, member_id: str) -> None:
        member = self.groups[group_id].members.get(member_id)
        if member is not None:
            self._sessions[(group_id, member_id)] = self.now_ms() + self._session_ms(
                group_id, member
            )

    def classic_leave(
        self, group: ConsumerGroup, members: Iterable[tuple[str, str | None]]
    ) -> list[ErrorCode]:
        """LeaveGroup from classic members of a consumer group (a member of either protocol
        may be named by its instance id): each is fenced, as Kafka's
        ``classicGroupLeaveToConsumerGroup`` does."""
        results = []
        for member_id, instance_id in members:
            holder = group.static_member(instance_id)
            found = holder if instance_id is not None else group.members.get(member_id)
            if found is None:
                results.append(ErrorCode.unknown_member_id)
            elif member_id and found.member_id != member_id:
                results.append(ErrorCode.fenced_instance_id)
            else:
                self._fence(group, found.member_id, "left")
                results.append(ErrorCode.none)
            if group.group_id not in self.groups:
                group = ConsumerGroup(group.group_id)  # downgraded: nobody else is here
        return results

    # ---- timers --------------------------------------------------------------------

    def watching(self) -> bool:
        return any(g.members for g in self.groups.values())

    def tick(self) -> None:
        """Fence the members whose session or revocation deadline ran out. Members of a
        group loaded since the last tick get a whole session (and, if revoking, a whole
        rebalance timeout) from now."""
        now = self.now_ms()
        live: set[tuple[str, str]] = set()
        for group_id, group in list(self.groups.items()):
            for member_id, member in list(group.members.items()):
                key = (group_id, member_id)
                live.add(key)
                session = self._sessions.setdefault(key, now + self._session_ms(group_id, member))
                if member.state == MemberState.UNREVOKED_PARTITIONS:
                    self._revocations.setdefault(
                        key, (member.member_epoch, now + max(member.rebalance_timeout_ms, 0))
                    )
                revocation = self._revocations.get(key)
                if session <= now:
                    self._fence(group, member_id, "session timeout")
                elif revocation and revocation[1] <= now and member.member_epoch == revocation[0]:
                    self._fence(group, member_id, "did not revoke its partitions in time")
                elif (classic := self._classic_deadlines.get(key)) and classic[0] <= now:
                    self._fence(group, member_id, classic[1])
                if group_id not in self.groups:
                    break  # downgraded to a classic group
        timed = (*self._sessions, *self._revocations, *self._classic_deadlines)
        for key in [k for k in timed if k not in live]:
            self._forget_member(key)

    def _fence(self, group: ConsumerGroup, member_id: str, reason: str) -> None:
        log.info("group %s: member %s fenced (%s)", group.group_id, member_id, reason)
        classic, records = self._downgrade(group, member_id)
        records = records or fence(group, member_id, self.topics)
        try:
            partition = self.manager.apply(group.group_id, records)
        except KafkaError:
            return  # no longer the coordinator: the new one times its members
        self._forget_member((group.group_id, member_id))
        if classic is not None:
            self._install_classic_group(classic)
        self.emit(
            EventType.GROUP_MEMBER_REMOVED, group=group.group_id, member=member_id, reason=reason
        )
        task = asyncio.create_task(self._persist(partition, records))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _persist(self, partition: int, records: list[GroupRecord]) -> None:
        try:
            await self.manager.persist(partition, records)
        except KafkaError as exc:  # the partition is reloaded from its log
            log.info("a fencing was not written to partition %d: %s", partition, exc)

    # ---- what other requests check ---------------------------------------------------

    def group(self, group_id: str) -> ConsumerGroup:
        """ConsumerGroupDescribe's group: GROUP_ID_NOT_FOUND for a missing or classic one."""
        self.manager.check_coordinator(group_id)
        group = self.groups.get(group_id)
        if group is not None:
            return group
        if group_id in self.manager.groups:
            raise KafkaError(
                ErrorCode.group_id_not_found, f"Group {group_id} is not a consumer group."
            )
        raise KafkaError(ErrorCode.group_id_not_found, f"Group {group_id} not found.")

    def validate_commit(
        self,
        group: ConsumerGroup,
        member_id: str,
        member_epoch: int,
        group_instance_id: str | None,
        transactional: bool,
        version: int,
    ) -> None:
        """Kafka's ``ConsumerGroup.validateOffsetCommit``: anyone may commit to an empty
        group without an epoch (the admin client); a transaction may commit without naming
        a member; otherwise the member must exist, commit with v9+, at its epoch (a classic
        member: with any version, at its epoch as generation, else ILLEGAL_GENERATION)."""
        if member_epoch < 0 and not group.members:
            return
        if transactional and member_epoch == -1 and not member_id and group_instance_id is None:
            return
        member = group.members.get(member_id)
        if member is None:
            raise KafkaError(
                ErrorCode.unknown_member_id,
                f"Member {member_id} is not a member of group {group.group_id}.",
            )
        if not transactional and not member.uses_classic_protocol:
            _check_commit_version(version)
        _check_member_epoch(member_epoch, member)

    def validate_fetch(
        self, group: ConsumerGroup, member_id: str | None, member_epoch: int
    ) -> None:
        """Kafka's ``ConsumerGroup.validateOffsetFetch``: a fetch naming no member (the
        admin client) is taken; a member must exist and be at its epoch."""
        if member_id is None and member_epoch < 0:
            return
        member = group.members.get(member_id or "")
        if member is None:
            raise KafkaError(
                ErrorCode.unknown_member_id,
                f"Member {member_id} is not a member of group {group.group_id}.",
            )
        _check_member_epoch(member_epoch, member)

    def describe_names(self, partitions: Assignment) -> Iterable[tuple[str, str, list[int]]]:
        """(topic id, name, partitions) of an assignment, for ConsumerGroupDescribe."""
        for topic_id, ps in sorted(partitions.items()):
            yield topic_id, self.topics.topic_name(topic_id) or "", sorted(ps)


def _check_commit_version(version: int) -> None:
    if version < OFFSET_COMMIT_MIN_VERSION:
        raise KafkaError(
            ErrorCode.unsupported_version,
            "OffsetCommit version 9 or above must be used by members using the modern "
            "group protocol",
        )


def _check_member_epoch(received: int, member: ConsumerGroupMember) -> None:
    """Kafka's ``validateMemberEpoch``: a classic member's epoch is its generation."""
    if received == member.member_epoch:
        return
    if member.uses_classic_protocol:
        raise KafkaError(
            ErrorCode.illegal_generation,
            f"The received generation id {received} does not match the expected "
            f"generation id {member.member_epoch}.",
        )
    raise KafkaError(
        ErrorCode.stale_member_epoch,
        f"The received member epoch {received} does not match the expected member epoch "
        f"{member.member_epoch}.",
    )
