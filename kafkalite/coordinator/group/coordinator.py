"""The group coordinator: drives ``Group`` state machines with real waiting and time.

A JoinGroup is parked until every member has rejoined or the rebalance timeout passes; a
follower's SyncGroup is parked until the leader sends the assignment; a ticker expires
members whose heartbeats stopped and ends initial delays. Every wait is bounded. What is
kept (groups, committed offsets) and how it is written to ``__consumer_offsets`` is the
``GroupMetadataManager``'s job. One asyncio task (the broker's loop) owns all of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Sequence

from kafkalite.coordinator.group.consumer_coordinator import (
    ConsumerGroupConfig,
    ConsumerGroupCoordinator,
)
from kafkalite.coordinator.group.consumer_group_heartbeat import TopicsView
from kafkalite.coordinator.group.consumer_protocol import subscribed_topics
from kafkalite.coordinator.group.group import Group, GroupState, Member
from kafkalite.coordinator.group.join_group import JoinRequest, JoinResult
from kafkalite.coordinator.group.metadata_manager import GroupMetadataManager
from kafkalite.coordinator.group.offsets_log import CommittedOffset, OffsetsTopic
from kafkalite.events import EventSink, EventType
from kafkalite.protocol.errors import ErrorCode, KafkaError
from kafkalite.supervision import Spawn
from kafkalite.ticks import Ticker

log = logging.getLogger(__name__)
GROUP_ID_NOT_FOUND_COMMIT_VERSION = 9
"""OffsetCommit v9+ answers GROUP_ID_NOT_FOUND where older versions say ILLEGAL_GENERATION."""
TICK_S = 0.1
"""How often sessions and rebalance deadlines are checked while some group has members."""
IDLE_TICK_S = 1.0
"""How often otherwise: joins wake the check at once, and so does a change of leadership."""


class GroupCoordinator:
    def __init__(
        self,
        offsets: OffsetsTopic,
        now_ms: Callable[[], int],
        emit: EventSink,
        min_session_ms: Callable[[], int],
        max_session_ms: Callable[[], int],
        initial_rebalance_delay_ms: Callable[[], int],
        *,
        topics: TopicsView,
        consumer_config: ConsumerGroupConfig,
    ) -> None:
        self.manager = GroupMetadataManager(offsets, now_ms, emit, self._tombstone_soon)
        self.consumer = ConsumerGroupCoordinator(
            self.manager, topics, consumer_config, now_ms, emit, self._end_classic_rebalance
        )
        """KIP-848 consumer groups, beside the classic ones (the same id space and log)."""
        self.now_ms = now_ms
        self.emit = emit
        self.min_session_ms = min_session_ms
        self.max_session_ms = max_session_ms
        self.initial_rebalance_delay_ms = initial_rebalance_delay_ms
        self._join_waiters: dict[tuple[str, str], asyncio.Future[JoinResult]] = {}
        self._sync_waiters: dict[tuple[str, str], asyncio.Future[bytes]] = {}
        self._pending_members: set[tuple[str, str]] = set()
        self._ticker: asyncio.Task[None] | None = None
        self._ticks = Ticker()
        self._cleanups: set[asyncio.Task[None]] = set()

    @property
    def groups(self) -> dict[str, Group]:
        return self.manager.groups

    def start(self, spawn: Spawn) -> None:
        self._ticker = spawn(self._tick_forever(), "group-coordinator")

    async def stop(self) -> None:
        tasks = [*self._cleanups, *([self._ticker] if self._ticker else [])]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.consumer.stop()
        await self.manager.stop()

    def on_topic_deleted(self, topic: str) -> None:
        """Forget every group's committed offsets for a deleted topic, and write their
        tombstones where this broker coordinates, so that OffsetFetch no longer reports
        them (Kafka's ``onPartitionsDeleted``)."""
        for partition, offsets in self.manager.forget_topic(topic).items():
            self._tombstone_soon(partition, offsets)

    def _tombstone_soon(self, partition: int, offsets: list[tuple[str, str, int]]) -> None:
        task = asyncio.create_task(self._write_tombstones(partition, offsets))
        self._cleanups.add(task)
        task.add_done_callback(self._cleanups.discard)

    async def _write_tombstones(self, partition: int, offsets: list[tuple[str, str, int]]) -> None:
        try:
            await self.manager.write_tombstones(partition, offsets)
        except KafkaError as exc:  # no longer the coordinator: its successor reloads the log
            log.info(
                "offsets of a deleted topic not cleaned up in partition %d: %s", partition, exc
            )

    def check_coordinator(self, group_id: str) -> int:
        return self.manager.check_coordinator(group_id)

    def _group(self, group_id: str) -> Group:
        self.check_coordinator(group_id)
        group = self.groups.get(group_id)
        if group is None or group.state == GroupState.DEAD:
            raise KafkaError(ErrorCode.unknown_member_id, f"group {group_id} has no members")
        return group

    # ---- join ----------------------------------------------------------------------

    async def join(self, req: JoinRequest) -> JoinResult:
        self.check_coordinator(req.group_id)
        self.wake()  # its session, and the rebalance it may start, are watched from now
        if not self.min_session_ms() <= req.session_timeout_ms <= self.max_session_ms():
            return JoinResult(ErrorCode.invalid_session_timeout)
        consumer_group = self.manager.consumer_groups.get(req.group_id)
        if consumer_group is not None and consumer_group.members:
            return await self.consumer.classic_join(consumer_group, req)
        await self.consumer.make_way_for_classic_group(req.group_id)
        group = self.manager.get_or_create(req.group_id)
        if not group.supports(req.protocol_type, req.protocols):
            return JoinResult(ErrorCode.inconsistent_group_protocol)
        member_id = req.member_id
        if not member_id:
            member_id = Group.new_member_id(req.client_id)
            if group.static_member(req.group_instance_id) is not None:
                return await self._rejoin_static(group, member_id, req)
            if req.require_known_member_id and req.group_instance_id is None:
                self._pending_members.add((req.group_id, member_id))
                return JoinResult(ErrorCode.member_id_required, member_id=member_id)
        elif group.is_fenced_instance(member_id, req.group_instance_id):
            return JoinResult(ErrorCode.fenced_instance_id, member_id=member_id)
        elif member_id not in group.members and (req.group_id, member_id) not in (
            self._pending_members
        ):
            return JoinResult(ErrorCode.unknown_member_id, member_id=member_id)
        self._pending_members.discard((req.group_id, member_id))
        member = group.members.get(member_id)
        if member is None:
            member = Member(
                member_id,
                req.client_id,
                req.client_host,
                req.session_timeout_ms,
                req.rebalance_timeout_ms,
                req.protocols,
                req.group_instance_id,
            )
            group.add_member(member, req.protocol_type)
            group.extend_initial_delay(self.now_ms(), self.initial_rebalance_delay_ms())
        else:
            member.last_heartbeat_ms = self.now_ms()
            if self._is_redundant_rejoin(group, member, req.protocols):
                return self._join_result(group, member_id)
            self._update(member, req)
        if group.state != GroupState.PREPARING_REBALANCE and req.reason:
            log.info(
                "group %s rebalances: member %s joins (client reason: %s)",
                group.group_id,
                member_id,
                req.reason,
            )
        return await self._join_rebalance(group, member)

    @staticmethod
    def _update(member: Member, req: JoinRequest) -> None:
        member.protocols = req.protocols
        member.session_timeout_ms = req.session_timeout_ms
        member.rebalance_timeout_ms = req.rebalance_timeout_ms

    async def _join_rebalance(self, group: Group, member: Member) -> JoinResult:
        """``member`` takes part in the group's next generation: wait for it to form."""
        member.last_heartbeat_ms = self.now_ms()
        if group.state != GroupState.PREPARING_REBALANCE:
            group.prepare_rebalance(self.now_ms(), self.initial_rebalance_delay_ms())
            self._fail_sync_waiters(group, ErrorCode.rebalance_in_progress)
        member.joined = True
        member_id = member.member_id
        waiter: asyncio.Future[JoinResult] = asyncio.get_running_loop().create_future()
        previous = self._join_waiters.pop((group.group_id, member_id), None)
        if previous is not None and not previous.done():
            previous.set_result(JoinResult(ErrorCode.unknown_member_id, member_id=member_id))
        self._join_waiters[(group.group_id, member_id)] = waiter
        self._maybe_complete_join(group)
        timeout_s = member.rebalance_timeout_ms / 1000 + 5
        try:
            async with asyncio.timeout(timeout_s):
                return await asyncio.shield(waiter)
        except TimeoutError:
            return JoinResult(ErrorCode.rebalance_in_progress, member_id=member_id)

    async def _rejoin_static(self, group: Group, member_id: str, req: JoinRequest) -> JoinResult:
        """A static member came back without its member id (KIP-345): it takes its old
        place under ``member_id``, and the old id is fenced. In a stable group whose
        protocol it does not change, nobody else rebalances: it gets the generation it was
        in, with the old leader id, so that it does not reassign even if it led; its
        SyncGroup then returns its old assignment."""
        assert req.group_instance_id is not None
        old_leader = group.leader_id or ""
        old_member_id = group.replace_static_member(req.group_instance_id, member_id)
        self._fence(group, old_member_id)
        member = group.members[member_id]
        member.client_id, member.client_host = req.client_id, req.client_host
        unchanged = member.protocols == req.protocols
        self._update(member, req)
        member.last_heartbeat_ms = self.now_ms()
        if group.state == GroupState.STABLE and unchanged:
            await self.manager.store_group(group)
            self.emit(
                EventType.STATIC_MEMBER_REJOINED,
                group=group.group_id,
                group_instance_id=req.group_instance_id,
                member=member_id,
                replaced=old_member_id,
                generation=group.generation_id,
            )
            return JoinResult(
                ErrorCode.none,
                group.generation_id,
                group.protocol_type,
                group.protocol_name,
                old_leader,
                member_id,
            )
        return await self._join_rebalance(group, member)

    def _fence(self, group: Group, old_member_id: str) -> None:
        """The static member's older incarnation is waiting in a join or a sync: answer it
        FENCED_INSTANCE_ID."""
        self._resolve_join(
            group, old_member_id, JoinResult(ErrorCode.fenced_instance_id, member_id=old_member_id)
        )
        waiter = self._sync_waiters.pop((group.group_id, old_member_id), None)
        if waiter is not None and not waiter.done():
            waiter.set_exception(KafkaError(ErrorCode.fenced_instance_id))

    @staticmethod
    def _is_redundant_rejoin(
        group: Group, member: Member, protocols: list[tuple[str, bytes]]
    ) -> bool:
        """Kafka answers a rejoin that changes nothing without a new rebalance: in
        CompletingRebalance from anyone, in Stable from a follower (the leader's rejoin
        means it wants to reassign)."""
        if protocols != member.protocols:
            return False
        if group.state == GroupState.COMPLETING_REBALANCE:
            return True
        return group.state == GroupState.STABLE and member.member_id != group.leader_id

    def _join_result(self, group: Group, member_id: str) -> JoinResult:
        leader = member_id == group.leader_id
        protocol = group.protocol_name or ""
        members = (
            [
                (m.member_id, m.group_instance_id, m.metadata_for(protocol))
                for m in group.members.values()
            ]
            if leader
            else []
        )
        return JoinResult(
            ErrorCode.none,
            group.generation_id,
            group.protocol_type,
            group.protocol_name,
            group.leader_id or "",
            member_id,
            members,
        )

    def _maybe_complete_join(self, group: Group, timed_out: bool = False) -> None:
        if group.state != GroupState.PREPARING_REBALANCE:
            return
        if not (group.ready_to_complete_join(self.now_ms()) or timed_out):
            return
        removed = group.complete_join(self.now_ms())
        for mid in removed:
            self._resolve_join(group, mid, JoinResult(ErrorCode.unknown_member_id, member_id=mid))
        self.emit(
            EventType.GROUP_REBALANCED,
            group=group.group_id,
            generation=group.generation_id,
            state=group.state.value,
            members=sorted(group.members),
            leader=group.leader_id,
            removed=removed,
        )
        for mid in list(group.members):
            self._resolve_join(group, mid, self._join_result(group, mid))

    def _resolve_join(self, group: Group, member_id: str, result: JoinResult) -> None:
        waiter = self._join_waiters.pop((group.group_id, member_id), None)
        if waiter is not None and not waiter.done():
            waiter.set_result(result)

    # ---- sync, heartbeat, leave ------------------------------------------------------

    def _member(
        self,
        group: Group,
        member_id: str,
        generation_id: int,
        group_instance_id: str | None = None,
    ) -> Member:
        if group.is_fenced_instance(member_id, group_instance_id):
            raise KafkaError(ErrorCode.fenced_instance_id)
        member = group.members.get(member_id)
        if member is None:
            raise KafkaError(ErrorCode.unknown_member_id)
        if generation_id != group.generation_id:
            raise KafkaError(ErrorCode.illegal_generation)
        member.last_heartbeat_ms = self.now_ms()
        return member

    async def sync(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        assignments: dict[str, bytes],
        group_instance_id: str | None = None,
    ) -> bytes:
        self.check_coordinator(group_id)
        consumer_group = self.manager.consumer_groups.get(group_id)
        if consumer_group is not None:
            return self.consumer.classic_sync(
                consumer_group, member_id, group_instance_id, generation_id
            )
        group = self._group(group_id)
        member = self._member(group, member_id, generation_id, group_instance_id)
        if group.state == GroupState.PREPARING_REBALANCE:
            raise KafkaError(ErrorCode.rebalance_in_progress)
        if group.state == GroupState.STABLE:
            return member.assignment
        if member_id == group.leader_id:
            group.complete_sync(assignments, self.now_ms())
            await self.manager.store_group(group)
            for (gid, mid), pending in list(self._sync_waiters.items()):
                if gid == group_id and not pending.done():
                    pending.set_result(
                        group.members[mid].assignment if mid in group.members else b""
                    )
            return member.assignment
        waiter: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._sync_waiters[(group_id, member_id)] = waiter
        member.awaiting_sync = True
        try:
            async with asyncio.timeout(member.session_timeout_ms / 1000):
                return await asyncio.shield(waiter)
        except TimeoutError:
            raise KafkaError(ErrorCode.rebalance_in_progress) from None
        finally:
            member.awaiting_sync = False
            self._sync_waiters.pop((group_id, member_id), None)

    def _end_classic_rebalance(self, group_id: str) -> None:
        """The classic group becomes a consumer group: the JoinGroups and SyncGroups it
        holds get REBALANCE_IN_PROGRESS, so that their members join again, now as classic
        members of the consumer group (Kafka's ``convertToConsumerGroup``)."""
        for gid, member_id in [k for k in self._join_waiters if k[0] == group_id]:
            waiter = self._join_waiters.pop((gid, member_id))
            if not waiter.done():
                waiter.set_result(JoinResult(ErrorCode.rebalance_in_progress, member_id=member_id))
        for gid, member_id in [k for k in self._sync_waiters if k[0] == group_id]:
            sync = self._sync_waiters.pop((gid, member_id))
            if not sync.done():
                sync.set_exception(KafkaError(ErrorCode.rebalance_in_progress))
        self._pending_members = {k for k in self._pending_members if k[0] != group_id}

    def _fail_sync_waiters(self, group: Group, error: ErrorCode) -> None:
        for (gid, mid), waiter in list(self._sync_waiters.items()):
            if gid == group.group_id and not waiter.done():
                waiter.set_exception(KafkaError(error))
                self._sync_waiters.pop((gid, mid))

    def heartbeat(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None = None,
    ) -> None:
        self.check_coordinator(group_id)
        consumer_group = self.manager.consumer_groups.get(group_id)
        if consumer_group is not None:
            self.consumer.classic_heartbeat(
                consumer_group, member_id, group_instance_id, generation_id
            )
            return
        group = self._group(group_id)
        if group.is_fenced_instance(member_id, group_instance_id):
            raise KafkaError(ErrorCode.fenced_instance_id)
        if group.state == GroupState.PREPARING_REBALANCE and member_id in group.members:
            group.members[member_id].last_heartbeat_ms = self.now_ms()
            raise KafkaError(ErrorCode.rebalance_in_progress)
        self._member(group, member_id, generation_id)

    def leave(
        self,
        group_id: str,
        members: Iterable[tuple[str, str | None]],
        reasons: Sequence[str | None] = (),
    ) -> list[ErrorCode]:
        """LeaveGroup for ``(member_id, group_instance_id)`` pairs; a static member may be
        named by its instance id alone (an admin removing it). ``reasons`` (LeaveGroup
        v5, KIP-800) are what each client says about why it leaves, shown in the event."""
        self.check_coordinator(group_id)
        consumer_group = self.manager.consumer_groups.get(group_id)
        if consumer_group is not None:
            return self.consumer.classic_leave(consumer_group, members)
        group = self._group(group_id)
        results = []
        for index, (member_id, instance_id) in enumerate(members):
            holder = group.static_member(instance_id)
            if instance_id is not None and holder is None:
                results.append(ErrorCode.unknown_member_id)
            elif holder is not None and member_id and member_id != holder:
                results.append(ErrorCode.fenced_instance_id)
            elif (holder or member_id) not in group.members:
                results.append(ErrorCode.unknown_member_id)
            else:
                reason = reasons[index] if index < len(reasons) else None
                self._remove(group, holder or member_id, f"left: {reason}" if reason else "left")
                results.append(ErrorCode.none)
        return results

    def _remove(self, group: Group, member_id: str, reason: str) -> None:
        group.remove_member(member_id)
        self._resolve_join(group, member_id, JoinResult(ErrorCode.unknown_member_id))
        self.emit(
            EventType.GROUP_MEMBER_REMOVED, group=group.group_id, member=member_id, reason=reason
        )
        if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            group.prepare_rebalance(self.now_ms())
            self._fail_sync_waiters(group, ErrorCode.rebalance_in_progress)
        self._maybe_complete_join(group)

    async def _tick_forever(self) -> None:
        while True:
            await self._ticks.sleep(TICK_S if self.watching() else IDLE_TICK_S)
            self.tick()

    def watching(self) -> bool:
        """Some member's session or some rebalance can run out."""
        return (
            bool(self._join_waiters)
            or self.consumer.watching()
            or any(
                g.members or g.state not in (GroupState.EMPTY, GroupState.DEAD)
                for g in self.groups.values()
            )
        )

    def wake(self) -> None:
        """Check now: partition leaderships changed (the groups of partitions this broker
        no longer leads are dropped at once), or a member joined."""
        self._ticks.wake()

    def tick(self) -> None:
        """Drop the groups of partitions this broker no longer leads; expire silent
        members; end joins whose deadline or initial delay has passed."""
        if self.manager.resign_lost_partitions():
            self._fail_waiters_of_unknown_groups()
        self.consumer.tick()
        now = self.now_ms()
        for group in list(self.groups.values()):
            for mid in group.expired_members(now):
                self._remove(group, mid, "session timeout")
            if group.state == GroupState.PREPARING_REBALANCE:
                self._maybe_complete_join(group, timed_out=now >= group.rebalance_deadline_ms)

    def _fail_waiters_of_unknown_groups(self) -> None:
        """Parked joins and syncs of groups another broker now coordinates: NOT_COORDINATOR,
        so their members find the new coordinator at once."""
        for (gid, mid), join in list(self._join_waiters.items()):
            if gid not in self.groups:
                del self._join_waiters[(gid, mid)]
                if not join.done():
                    join.set_result(JoinResult(ErrorCode.not_coordinator, member_id=mid))
        for (gid, mid), sync in list(self._sync_waiters.items()):
            if gid not in self.groups:
                del self._sync_waiters[(gid, mid)]
                if not sync.done():
                    sync.set_exception(KafkaError(ErrorCode.not_coordinator))
        self._pending_members = {k for k in self._pending_members if k[0] in self.groups}

    # ---- offsets and administration ------------------------------------------------

    async def commit(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        offsets: dict[tuple[str, int], CommittedOffset],
        group_instance_id: str | None = None,
        api_version: int = 9,
    ) -> None:
        """OffsetCommit, checked as Kafka's ``validateOffsetCommit`` checks the group: for
        a consumer group, the member and its epoch (``consumer_coordinator``); for a classic
        group, without a generation, an empty (or new, "simple") group takes commits from
        anyone; a member must be current; a non-empty group takes no anonymous commits. A
        member's commit to a group that does not exist gets GROUP_ID_NOT_FOUND (v9+) or
        ILLEGAL_GENERATION (older versions)."""
        self.check_coordinator(group_id)
        consumer_group = self.manager.consumer_groups.get(group_id)
        if consumer_group is not None:
            self.consumer.validate_commit(
                consumer_group, member_id, generation_id, group_instance_id, False, api_version
            )
            await self.manager.store_offsets(group_id, offsets)
            return
        group = self.groups.get(group_id)
        if group is None or group.state == GroupState.DEAD:
            if generation_id >= 0:
                missing = (
                    ErrorCode.group_id_not_found
                    if api_version >= GROUP_ID_NOT_FOUND_COMMIT_VERSION
                    else ErrorCode.illegal_generation
                )
                raise KafkaError(missing, f"group {group_id} does not exist")
            group = self.manager.get_or_create(group_id)  # a simple group, for its offsets
        if generation_id < 0 and group.state == GroupState.EMPTY:
            pass
        elif generation_id >= 0 or member_id or group_instance_id is not None:
            self._member(group, member_id, generation_id, group_instance_id)
            if group.state == GroupState.COMPLETING_REBALANCE:
                raise KafkaError(ErrorCode.rebalance_in_progress)
        elif group.state != GroupState.EMPTY:
            raise KafkaError(ErrorCode.unknown_member_id, "only members commit to a live group")
        await self.manager.store_offsets(group_id, offsets)

    async def commit_transactional(
        self,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        generation_id: int,
        member_id: str,
        offsets: dict[tuple[str, int], CommittedOffset],
        group_instance_id: str | None = None,
    ) -> None:
        """TxnOffsetCommit: counted once the producer's transaction commits. A member and
        generation (or member epoch), when given (KIP-447), must be current, as for a plain
        commit."""
        self.check_coordinator(group_id)
        consumer_group = self.manager.consumer_groups.get(group_id)
        if consumer_group is not None:
            self.consumer.validate_commit(
                consumer_group, member_id, generation_id, group_instance_id, True, 0
            )
        else:
            group = self.groups.setdefault(group_id, Group(group_id))
            if generation_id >= 0 or member_id:
                self._member(group, member_id, generation_id, group_instance_id)
        if not offsets:
            return  # nothing to write: an empty batch cannot be appended
        await self.manager.store_transactional_offsets(
            group_id, producer_id, producer_epoch, offsets
        )

    def complete_transaction(self, partition: int, producer_id: int, committed: bool) -> None:
        self.manager.complete_transaction(partition, producer_id, committed)

    def fetch_offsets(self, group_id: str) -> dict[tuple[str, int], CommittedOffset]:
        return self.manager.fetch_offsets(group_id)

    def unstable_offsets(self, group_id: str) -> set[tuple[str, int]]:
        return self.manager.unstable_offsets(group_id)

    def list_groups(self) -> list[Group]:
        return self.manager.list_groups()

    async def delete_group(self, group_id: str) -> ErrorCode:
        return await self.manager.delete_group(group_id)

    async def delete_offsets(
        self, group_id: str, partitions: list[tuple[str, int]]
    ) -> dict[tuple[str, int], ErrorCode]:
        """OffsetDelete: a group's offsets for partitions of topics none of its members is
        subscribed to (GROUP_SUBSCRIBED_TO_TOPIC for the others)."""
        self.check_coordinator(group_id)
        group = self.groups.get(group_id)
        consumer_group = self.manager.consumer_groups.get(group_id)
        subscribed: set[str] = set()
        if consumer_group is not None:
            subscribed = set(consumer_group.subscribed_topic_names())
            subscribed |= consumer_group.subscription_metadata.keys()
        elif group is None or group.state == GroupState.DEAD:
            raise KafkaError(ErrorCode.group_id_not_found)
        elif group.protocol_type == "consumer" and group.protocol_name:
            for member in group.members.values():
                subscribed |= subscribed_topics(member.metadata_for(group.protocol_name))
        results = {
            tp: ErrorCode.group_subscribed_to_topic if tp[0] in subscribed else ErrorCode.none
            for tp in partitions
        }
        deletable = [tp for tp, error in results.items() if error == ErrorCode.none]
        deleted = await self.manager.delete_offsets(group_id, deletable)
        if deleted:
            self.emit(
                EventType.OFFSETS_DELETED,
                group=group_id,
                partitions=[f"{t}-{p}" for t, p in deleted],
            )
        return results
