"""The group coordinator: drives ``Group`` state machines with real waiting and time.

A JoinGroup is parked until every member has rejoined or the rebalance timeout passes; a
follower's SyncGroup is parked until the leader sends the assignment; a ticker expires
members whose heartbeats stopped. Every wait is bounded. Commits and group metadata are
written to ``__consumer_offsets`` and acknowledged only once committed there, so they
survive a coordinator restart. One asyncio task (the broker's loop) owns all of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from kafkalite.coordinator.group.group import Group, GroupState, Member
from kafkalite.coordinator.group.offsets_log import (
    CommittedOffset,
    OffsetsTopic,
    decode,
    group_record,
    offset_record,
    partition_for,
)
from kafkalite.events import EventSink, EventType
from kafkalite.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)
TICK_S = 0.1


@dataclass(frozen=True, slots=True)
class JoinRequest:
    group_id: str
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    require_known_member_id: bool


@dataclass(slots=True)
class JoinResult:
    error: ErrorCode = ErrorCode.none
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    member_id: str = ""
    members: list[tuple[str, str | None, bytes]] = field(default_factory=list)


class GroupCoordinator:
    def __init__(
        self,
        offsets: OffsetsTopic,
        now_ms: Callable[[], int],
        emit: EventSink,
        min_session_ms: Callable[[], int],
        max_session_ms: Callable[[], int],
    ) -> None:
        self.offsets = offsets
        self.now_ms = now_ms
        self.emit = emit
        self.min_session_ms = min_session_ms
        self.max_session_ms = max_session_ms
        self.groups: dict[str, Group] = {}
        self.committed: dict[str, dict[tuple[str, int], CommittedOffset]] = {}
        self._loaded: dict[int, int] = {}  # offsets partition -> leader epoch loaded in
        self._join_waiters: dict[tuple[str, str], asyncio.Future[JoinResult]] = {}
        self._sync_waiters: dict[tuple[str, str], asyncio.Future[bytes]] = {}
        self._pending_members: set[tuple[str, str]] = set()
        self._ticker: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._ticker = asyncio.create_task(self._tick_forever(), name="group-coordinator")

    async def stop(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker

    # ---- ownership and loading ---------------------------------------------------

    def check_coordinator(self, group_id: str) -> int:
        """The offsets partition of ``group_id``, loaded; NOT_COORDINATOR when not ours.

        State is reloaded from the log whenever this broker's leadership of the partition
        is a new one (a new leader epoch): in between, another coordinator may have taken
        commits that the memory of an earlier leadership does not have."""
        partition = partition_for(group_id, self.offsets.partition_count())
        epoch = self.offsets.leader_epoch(partition)
        if epoch is None:
            self._loaded.pop(partition, None)
            raise KafkaError(ErrorCode.not_coordinator)
        if self._loaded.get(partition) != epoch:
            self._forget(partition)
            self._load(partition)
            self._loaded[partition] = epoch
        return partition

    def _forget(self, partition: int) -> None:
        count = self.offsets.partition_count()
        for group_id in [g for g in self.groups if partition_for(g, count) == partition]:
            self.groups.pop(group_id, None)
            self.committed.pop(group_id, None)

    def _load(self, partition: int) -> None:
        """Replay the partition: the latest value per key wins, as compaction would keep."""
        count = self.offsets.partition_count()
        for record in self.offsets.read_all(partition):
            decoded = decode(record)
            if decoded is None:
                continue
            key, value = decoded
            group_id = str(key.get("group"))
            if partition_for(group_id, count) != partition:
                continue
            if key.get("type") == "offset":
                self.groups.setdefault(group_id, Group(group_id))
                offsets = self.committed.setdefault(group_id, {})
                tp = (str(key["topic"]), int(key["partition"]))
                if value is None:
                    offsets.pop(tp, None)
                else:
                    offsets[tp] = CommittedOffset(
                        int(value["offset"]),
                        int(value["leader_epoch"]),
                        value.get("metadata"),
                        int(value["commit_timestamp"]),
                    )
            elif key.get("type") == "group" and value is not None:
                group = self.groups.setdefault(group_id, Group(group_id))
                group.generation_id = max(group.generation_id, int(value["generation"]))
                group.protocol_type = value.get("protocol_type")
        self.emit(EventType.GROUP_PARTITION_LOADED, partition=partition)

    def _group(self, group_id: str) -> Group:
        self.check_coordinator(group_id)
        group = self.groups.get(group_id)
        if group is None or group.state == GroupState.DEAD:
            raise KafkaError(ErrorCode.unknown_member_id, f"group {group_id} has no members")
        return group

    # ---- join ----------------------------------------------------------------------

    async def join(self, req: JoinRequest) -> JoinResult:
        self.check_coordinator(req.group_id)
        if not self.min_session_ms() <= req.session_timeout_ms <= self.max_session_ms():
            return JoinResult(ErrorCode.invalid_session_timeout)
        group = self.groups.setdefault(req.group_id, Group(req.group_id))
        if group.state == GroupState.DEAD:
            group = self.groups[req.group_id] = Group(req.group_id)
        if not group.supports(req.protocol_type, req.protocols):
            return JoinResult(ErrorCode.inconsistent_group_protocol)
        member_id = req.member_id
        if not member_id:
            member_id = Group.new_member_id(req.client_id)
            if req.require_known_member_id:
                self._pending_members.add((req.group_id, member_id))
                return JoinResult(ErrorCode.member_id_required, member_id=member_id)
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
        else:
            member.last_heartbeat_ms = self.now_ms()
            if self._is_redundant_rejoin(group, member, req.protocols):
                return self._join_result(group, member_id)
            member.protocols = req.protocols
            member.session_timeout_ms = req.session_timeout_ms
            member.rebalance_timeout_ms = req.rebalance_timeout_ms
        member.last_heartbeat_ms = self.now_ms()
        if group.state != GroupState.PREPARING_REBALANCE:
            group.prepare_rebalance(self.now_ms())
            self._fail_sync_waiters(group, ErrorCode.rebalance_in_progress)
        member.joined = True
        waiter: asyncio.Future[JoinResult] = asyncio.get_running_loop().create_future()
        previous = self._join_waiters.pop((group.group_id, member_id), None)
        if previous is not None and not previous.done():
            previous.set_result(JoinResult(ErrorCode.unknown_member_id, member_id=member_id))
        self._join_waiters[(group.group_id, member_id)] = waiter
        self._maybe_complete_join(group)
        timeout_s = req.rebalance_timeout_ms / 1000 + 5
        try:
            return await asyncio.wait_for(asyncio.shield(waiter), timeout_s)
        except TimeoutError:
            return JoinResult(ErrorCode.rebalance_in_progress, member_id=member_id)

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
        if not (group.all_joined() or timed_out):
            return
        removed = group.complete_join()
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

    def _member(self, group: Group, member_id: str, generation_id: int) -> Member:
        member = group.members.get(member_id)
        if member is None:
            raise KafkaError(ErrorCode.unknown_member_id)
        if generation_id != group.generation_id:
            raise KafkaError(ErrorCode.illegal_generation)
        member.last_heartbeat_ms = self.now_ms()
        return member

    async def sync(
        self, group_id: str, generation_id: int, member_id: str, assignments: dict[str, bytes]
    ) -> bytes:
        group = self._group(group_id)
        member = self._member(group, member_id, generation_id)
        if group.state == GroupState.PREPARING_REBALANCE:
            raise KafkaError(ErrorCode.rebalance_in_progress)
        if group.state == GroupState.STABLE:
            return member.assignment
        if member_id == group.leader_id:
            group.complete_sync(assignments)
            await self._store_group(group)
            for (gid, mid), pending in list(self._sync_waiters.items()):
                if gid == group_id and not pending.done():
                    pending.set_result(
                        group.members[mid].assignment if mid in group.members else b""
                    )
            return member.assignment
        waiter: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._sync_waiters[(group_id, member_id)] = waiter
        try:
            return await asyncio.wait_for(asyncio.shield(waiter), member.session_timeout_ms / 1000)
        except TimeoutError:
            raise KafkaError(ErrorCode.rebalance_in_progress) from None
        finally:
            self._sync_waiters.pop((group_id, member_id), None)

    def _fail_sync_waiters(self, group: Group, error: ErrorCode) -> None:
        for (gid, mid), waiter in list(self._sync_waiters.items()):
            if gid == group.group_id and not waiter.done():
                waiter.set_exception(KafkaError(error))
                self._sync_waiters.pop((gid, mid))

    def heartbeat(self, group_id: str, generation_id: int, member_id: str) -> None:
        group = self._group(group_id)
        if group.state == GroupState.PREPARING_REBALANCE and member_id in group.members:
            group.members[member_id].last_heartbeat_ms = self.now_ms()
            raise KafkaError(ErrorCode.rebalance_in_progress)
        self._member(group, member_id, generation_id)

    def leave(self, group_id: str, member_ids: list[str]) -> list[ErrorCode]:
        group = self._group(group_id)
        results = []
        for mid in member_ids:
            if mid not in group.members:
                results.append(ErrorCode.unknown_member_id)
                continue
            self._remove(group, mid, "left")
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
            await asyncio.sleep(TICK_S)
            now = self.now_ms()
            for group in list(self.groups.values()):
                for mid in group.expired_members(now):
                    self._remove(group, mid, "session timeout")
                if group.state == GroupState.PREPARING_REBALANCE and (
                    now >= group.rebalance_deadline_ms
                ):
                    self._maybe_complete_join(group, timed_out=True)

    # ---- offsets -------------------------------------------------------------------

    async def commit(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        offsets: dict[tuple[str, int], CommittedOffset],
    ) -> None:
        partition = self.check_coordinator(group_id)
        group = self.groups.setdefault(group_id, Group(group_id))  # simple commits create it
        has_members = group is not None and bool(group.members)
        if generation_id >= 0 or member_id or has_members:
            if group.state == GroupState.COMPLETING_REBALANCE:
                raise KafkaError(ErrorCode.rebalance_in_progress)
            self._member(group, member_id, generation_id)
        records = [offset_record(group_id, t, p, c) for (t, p), c in offsets.items()]
        await self.offsets.append(partition, records)
        self.committed.setdefault(group_id, {}).update(offsets)

    def fetch_offsets(self, group_id: str) -> dict[tuple[str, int], CommittedOffset]:
        self.check_coordinator(group_id)
        return dict(self.committed.get(group_id, {}))

    async def _store_group(self, group: Group) -> None:
        partition = self.check_coordinator(group.group_id)
        value = {
            "protocol_type": group.protocol_type,
            "generation": group.generation_id,
            "protocol": group.protocol_name,
            "leader": group.leader_id,
            "members": sorted(group.members),
        }
        await self.offsets.append(partition, [group_record(group.group_id, value, self.now_ms())])

    def list_groups(self) -> list[Group]:
        return [g for g in self.groups.values() if g.state != GroupState.DEAD]
