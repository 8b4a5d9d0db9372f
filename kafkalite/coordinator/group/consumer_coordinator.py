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
id space: an empty group of one kind gives way to the other (Kafka 4.0 also converts a
classic group with members, online: Kafka-Lite refuses that with GROUP_ID_NOT_FOUND).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

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
from kafkalite.coordinator.group.consumer_member import Assignment, MemberState
from kafkalite.coordinator.group.group import GroupState
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
    ) -> None:
        self.manager = manager
        self.topics = topics
        self.config = config
        self.now_ms = now_ms
        self.emit = emit
        self._sessions: dict[tuple[str, str], int] = {}
        """(group, member) -> when its session runs out."""
        self._revocations: dict[tuple[str, str], tuple[int, int]] = {}
        """(group, member) -> (the epoch it must leave, by when)."""
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
        records = self._make_way_for_consumer_group(request)
        group = self.groups.get(group_id)
        if request.member_epoch < 0:
            outcome = leave(group, request, self.topics)
        else:
            outcome = heartbeat(group, request, self.topics, assignors, self.config.max_size())
        records.extend(outcome.records)
        partition = self.manager.apply(group_id, records)
        self._after(group_id, request, outcome)
        await self.manager.persist(partition, records)
        return HeartbeatAnswer(
            outcome.member_id,
            outcome.member_epoch,
            self.config.heartbeat_interval_ms(group_id),
            outcome.assignment,
        )

    def _make_way_for_consumer_group(self, request: HeartbeatRequest) -> list[GroupRecord]:
        """A member joins a group id a classic group holds: an empty one (or one that only
        holds offsets) gives way, its record deleted (Kafka's
        ``maybeDeleteEmptyClassicGroup``); one with members stays."""
        classic = self.manager.groups.get(request.group_id)
        if classic is None:
            return []
        if request.member_epoch != 0 or classic.members or classic.state != GroupState.EMPTY:
            raise KafkaError(
                ErrorCode.group_id_not_found,
                f"Group {request.group_id} is not a consumer group: it is a classic group "
                "with members (Kafka 4.0 converts it online when all its members use the "
                "consumer protocol; Kafka-Lite does not).",
            )
        log.info("group %s: the empty classic group becomes a consumer group", request.group_id)
        return [({"type": "group", "group": request.group_id}, None)]

    async def make_way_for_classic_group(self, group_id: str) -> bool:
        """A classic member joins a group id a consumer group holds: an empty one gives
        way, its records deleted (Kafka's ``maybeDeleteEmptyConsumerGroup``); one with
        members stays, and the join is refused (False). Kafka 4.0 takes the classic member
        into the consumer group instead; Kafka-Lite does not."""
        group = self.groups.get(group_id)
        if group is None:
            return True
        if group.members:
            log.info("group %s: a classic member cannot join the consumer group", group_id)
            return False
        await self.manager.write(group_id, group_tombstones(group_id))
        return True

    def _after(self, group_id: str, request: HeartbeatRequest, outcome: HeartbeatOutcome) -> None:
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
            self._sessions[key] = now + self.config.session_timeout_ms(group_id)
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
                member=member.member_id,
                member_epoch=member.member_epoch,
                state=member.state.value,
                assigned=self.partition_names(member.assigned_partitions),
                revoking=self.partition_names(member.partitions_pending_revocation),
            )

    def _forget_member(self, key: tuple[str, str]) -> None:
        self._sessions.pop(key, None)
        self._revocations.pop(key, None)

    def partition_names(self, partitions: Assignment) -> list[str]:
        """``topic-partition`` names, in order (a topic id no longer known stays an id)."""
        return sorted(
            f"{self.topics.topic_name(topic_id) or topic_id}-{p}"
            for topic_id, ps in partitions.items()
            for p in ps
        )

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
                session = self._sessions.setdefault(
                    key, now + self.config.session_timeout_ms(group_id)
                )
                if member.state == MemberState.UNREVOKED_PARTITIONS:
                    self._revocations.setdefault(
                        key, (member.member_epoch, now + max(member.rebalance_timeout_ms, 0))
                    )
                revocation = self._revocations.get(key)
                if session <= now:
                    self._fence(group, member_id, "session timeout")
                elif revocation and revocation[1] <= now and member.member_epoch == revocation[0]:
                    self._fence(group, member_id, "did not revoke its partitions in time")
        for key in [k for k in (*self._sessions, *self._revocations) if k not in live]:
            self._forget_member(key)

    def _fence(self, group: ConsumerGroup, member_id: str, reason: str) -> None:
        log.info("group %s: member %s fenced (%s)", group.group_id, member_id, reason)
        records = fence(group, member_id, self.topics)
        try:
            partition = self.manager.apply(group.group_id, records)
        except KafkaError:
            return  # no longer the coordinator: the new one times its members
        self._forget_member((group.group_id, member_id))
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
        a member; otherwise the member must exist, commit with v9+, at its epoch."""
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
        if not transactional and version < OFFSET_COMMIT_MIN_VERSION:
            raise KafkaError(
                ErrorCode.unsupported_version,
                "OffsetCommit version 9 or above must be used by members using the modern "
                "group protocol",
            )
        _check_member_epoch(member_epoch, member.member_epoch)

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
        _check_member_epoch(member_epoch, member.member_epoch)

    def describe_names(self, partitions: Assignment) -> Iterable[tuple[str, str, list[int]]]:
        """(topic id, name, partitions) of an assignment, for ConsumerGroupDescribe."""
        for topic_id, ps in sorted(partitions.items()):
            yield topic_id, self.topics.topic_name(topic_id) or "", sorted(ps)


def _check_member_epoch(received: int, expected: int) -> None:
    if received != expected:
        raise KafkaError(
            ErrorCode.stale_member_epoch,
            f"The received member epoch {received} does not match the expected member epoch "
            f"{expected}.",
        )
