"""The coordinator of KIP-848 consumer groups: heartbeats in, records written, timers kept.

``consumer_group_heartbeat`` decides (pure); this module applies the decision to the
coordinator's memory, writes it to ``__consumer_offsets`` before answering, and fences a
member whose timer ran out (``member_timers``: its session, restarted by every heartbeat,
and its revocation deadline, as Kafka's coordinator keeps them).

After a failover the new coordinator starts every member's session afresh, as Kafka's does
when it loads a partition. Classic and consumer groups share the coordinator and the group
id space: an empty group of one kind gives way to the other; a classic group with members
becomes a consumer group when a member of the consumer protocol joins, and back when the
last one leaves or is replaced by a classic static member (``group_conversion`` carries out
what ``group_migration`` computes, as ``group.consumer.migration.policy`` allows), and
meanwhile its classic members are served through JoinGroup, SyncGroup and Heartbeat
(``classic_members``), with a third timer: the rebalance timeout to rejoin once told to,
and to send SyncGroup once joined. OffsetCommit and OffsetFetch check a member's epoch
with the group itself (``ConsumerGroup.validate_offset_commit``).
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
from kafkalite.coordinator.group.consumer_group_config import ConsumerGroupConfig
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
)
from kafkalite.coordinator.group.consumer_member import Assignment
from kafkalite.coordinator.group.group_conversion import GroupConversion
from kafkalite.coordinator.group.group_migration import CONSUMER_PROTOCOL_TYPE
from kafkalite.coordinator.group.join_group import JoinRequest, JoinResult
from kafkalite.coordinator.group.member_timers import MemberTimers
from kafkalite.coordinator.group.metadata_manager import GroupMetadataManager
from kafkalite.events import EventSink, EventType
from kafkalite.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)


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
        self.topics = topics
        self.config = config
        self.now_ms = now_ms
        self.emit = emit
        self.timers = MemberTimers(now_ms, config.session_timeout_ms)
        self.conversion = GroupConversion(
            manager, topics, config, now_ms, emit, self.timers, end_classic_rebalance
        )
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
        records, upgraded = self.conversion.make_way_for_consumer_group(request)
        group = upgraded or self.groups.get(group_id)
        classic = None
        if request.member_epoch < 0:
            outcome = leave(group, request, self.topics)
            if group is not None and outcome.member is None:
                classic, downgrade_records = self.conversion.classic_group_without(
                    group, outcome.member_id
                )
                outcome = replace(outcome, records=downgrade_records or outcome.records)
        else:
            outcome = heartbeat(group, request, self.topics, assignors, self.config.max_size())
        records.extend(outcome.records)
        partition = self.manager.apply(group_id, records)
        self._after(group_id, outcome)
        if classic is not None:
            self.conversion.install_classic_group(classic)
        await self.manager.persist(partition, records)
        return HeartbeatAnswer(
            outcome.member_id,
            outcome.member_epoch,
            self.config.heartbeat_interval_ms(group_id),
            outcome.assignment,
        )

    def _after(self, group_id: str, outcome: HeartbeatOutcome) -> None:
        """Restart the member's session, start or stop its revocation deadline, and tell."""
        key = (group_id, outcome.member_id)
        member = outcome.member
        if member is None:
            self.timers.forget(key)
            self.emit(
                EventType.GROUP_MEMBER_REMOVED,
                group=group_id,
                member=outcome.member_id,
                reason="left",
            )
        else:
            self.timers.heartbeat(key, member, outcome.assignment_changed)
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
        if replaced is not None and self.conversion.validate_online_downgrade(
            group, replaced.member_id, replaced=True
        ):
            return await self.conversion.downgrade_with_replaced_member(
                group, replaced, outcome, request
            )
        partition = self.manager.apply(group_id, outcome.records)
        self._after(group_id, outcome)
        self.timers.await_sync(group_id, member_id, request.rebalance_timeout_ms)
        await self.manager.persist(partition, outcome.records)
        return JoinResult(
            ErrorCode.none,
            outcome.member_epoch,
            CONSUMER_PROTOCOL_TYPE,
            request.protocols[0][0],
            "",
            member_id,
        )

    def classic_sync(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None, generation_id: int
    ) -> bytes:
        assignment = classic_members.sync(group, member_id, instance_id, generation_id, self.topics)
        self._restart_session(group.group_id, member_id)
        self.timers.synced(group.group_id, member_id)
        return assignment

    def classic_heartbeat(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None, generation_id: int
    ) -> None:
        """A classic member's Heartbeat: its session starts over; REBALANCE_IN_PROGRESS
        when it must rejoin, and then it has its rebalance timeout to do so."""
        member = classic_members.member(group, member_id, instance_id, generation_id)
        self._restart_session(group.group_id, member_id)
        if classic_members.must_rejoin(group, member):
            self.timers.await_rejoin(group.group_id, member_id, member.rebalance_timeout_ms)
            raise KafkaError(ErrorCode.rebalance_in_progress)

    def _restart_session(self, group_id: str, member_id: str) -> None:
        member = self.groups[group_id].members.get(member_id)
        if member is not None:
            self.timers.restart_session(group_id, member)

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
                live.add((group_id, member_id))
                if reason := self.timers.expired(group_id, member, now):
                    self._fence(group, member_id, reason)
                if group_id not in self.groups:
                    break  # downgraded to a classic group
        self.timers.forget_all_but(live)

    def _fence(self, group: ConsumerGroup, member_id: str, reason: str) -> None:
        log.info("group %s: member %s fenced (%s)", group.group_id, member_id, reason)
        classic, records = self.conversion.classic_group_without(group, member_id)
        records = records or fence(group, member_id, self.topics)
        try:
            partition = self.manager.apply(group.group_id, records)
        except KafkaError:
            return  # no longer the coordinator: the new one times its members
        self.timers.forget((group.group_id, member_id))
        if classic is not None:
            self.conversion.install_classic_group(classic)
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

    def describe_names(self, partitions: Assignment) -> Iterable[tuple[str, str, list[int]]]:
        """(topic id, name, partitions) of an assignment, for ConsumerGroupDescribe."""
        for topic_id, ps in sorted(partitions.items()):
            yield topic_id, self.topics.topic_name(topic_id) or "", sorted(ps)
