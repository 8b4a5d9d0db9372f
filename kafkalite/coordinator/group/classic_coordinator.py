"""The classic group protocol's coordinator: JoinGroup, SyncGroup, Heartbeat and
LeaveGroup drive ``Group`` state machines with real waiting and time.

A JoinGroup is parked until every member has rejoined or the rebalance timeout passes; a
follower's SyncGroup is parked until the leader sends the assignment; ``tick`` expires
members whose heartbeats stopped and ends initial delays. Every wait is bounded. What is
kept (groups, committed offsets) and how it is written to ``__consumer_offsets`` is the
``GroupMetadataManager``'s job; which protocol's coordinator takes a request is the
``GroupCoordinator``'s.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence

from kafkalite.coordinator.group.group import Group, GroupState, Member
from kafkalite.coordinator.group.join_group import JoinRequest, JoinResult
from kafkalite.coordinator.group.metadata_manager import GroupMetadataManager
from kafkalite.events import EventSink, EventType
from kafkalite.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)


class ClassicGroupCoordinator:
    def __init__(
        self,
        manager: GroupMetadataManager,
        now_ms: Callable[[], int],
        emit: EventSink,
        initial_rebalance_delay_ms: Callable[[], int],
    ) -> None:
        self.manager = manager
        self.now_ms = now_ms
        self.emit = emit
        self.initial_rebalance_delay_ms = initial_rebalance_delay_ms
        self._join_waiters: dict[tuple[str, str], asyncio.Future[JoinResult]] = {}
        self._sync_waiters: dict[tuple[str, str], asyncio.Future[bytes]] = {}
        self._pending_members: set[tuple[str, str]] = set()

    @property
    def groups(self) -> dict[str, Group]:
        return self.manager.groups

    def _group(self, group_id: str) -> Group:
        group = self.groups.get(group_id)
        if group is None or group.state == GroupState.DEAD:
            raise KafkaError(ErrorCode.unknown_member_id, f"group {group_id} has no members")
        return group

    # ---- join ----------------------------------------------------------------------

    async def join(self, req: JoinRequest) -> JoinResult:
        group = self.manager.get_or_create(req.group_id)
        if not group.supports(req.protocol_type, req.protocols):
            return JoinResult(ErrorCode.inconsistent_group_protocol)
        member_id = req.member_id
        if not member_id:
            member_id = Group.new_member_id(req.client_id)
            if group.static_member(req.group_instance_id) is not None:
                return await self._rejoin_static(group, member_id, req)
            if req.group_instance_id is not None:
                log.info(
                    "group %s: static member %s unknown here: it joins as a new member",
                    group.group_id,
                    req.group_instance_id,
                )
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
        selected protocol it does not change, nobody else rebalances: it gets the generation
        it was in, with the old leader id, so that it does not reassign even if it led; its
        SyncGroup then returns its old assignment. Its protocols' metadata may differ from
        its older incarnation's (a cooperative member's owned partitions are empty after a
        restart): as in Kafka (``updateStaticMemberThenRebalanceOrCompleteJoin``), only a
        change of the group's protocol rebalances a stable group."""
        assert req.group_instance_id is not None
        old_leader = group.leader_id or ""
        old_member_id = group.replace_static_member(req.group_instance_id, member_id)
        self._fence(group, old_member_id)
        member = group.members[member_id]
        member.client_id, member.client_host = req.client_id, req.client_host
        self._update(member, req)
        member.last_heartbeat_ms = self.now_ms()
        unchanged = group.select_protocol() == group.protocol_name
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
        log.info(
            "group %s: static member %s rejoins with a rebalance (group %s, protocol %s)",
            group.group_id,
            req.group_instance_id,
            group.state.name,
            "unchanged" if unchanged else "changed",
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
        members = group.current_classic_group_members() if leader else []
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
        if group.state == GroupState.PREPARING_REBALANCE:  # nobody rejoined: wait on
            return
        if group.state == GroupState.EMPTY:
            self.manager.store_group_soon(group)
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

    def member(
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
        group = self._group(group_id)
        member = self.member(group, member_id, generation_id, group_instance_id)
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

    def end_rebalance(self, group_id: str) -> None:
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
        group = self._group(group_id)
        if group.is_fenced_instance(member_id, group_instance_id):
            raise KafkaError(ErrorCode.fenced_instance_id)
        if group.state == GroupState.PREPARING_REBALANCE and member_id in group.members:
            group.members[member_id].last_heartbeat_ms = self.now_ms()
            raise KafkaError(ErrorCode.rebalance_in_progress)
        self.member(group, member_id, generation_id)

    def leave(
        self,
        group_id: str,
        members: Iterable[tuple[str, str | None]],
        reasons: Sequence[str | None] = (),
    ) -> list[ErrorCode]:
        """LeaveGroup for ``(member_id, group_instance_id)`` pairs; a static member may be
        named by its instance id alone (an admin removing it). ``reasons`` (LeaveGroup
        v5, KIP-800) are what each client says about why it leaves, shown in the event."""
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

    def watching(self) -> bool:
        """Some member's session or some rebalance can run out."""
        return bool(self._join_waiters) or any(
            g.members or g.state not in (GroupState.EMPTY, GroupState.DEAD)
            for g in self.groups.values()
        )

    def tick(self) -> None:
        """Expire silent members; end joins whose deadline or initial delay has passed."""
        now = self.now_ms()
        for group in list(self.groups.values()):
            for mid in group.expired_members(now):
                self._remove(group, mid, "session timeout")
            if group.state == GroupState.PREPARING_REBALANCE:
                self._maybe_complete_join(group, timed_out=now >= group.rebalance_deadline_ms)

    def fail_waiters_of_unknown_groups(self) -> None:
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
