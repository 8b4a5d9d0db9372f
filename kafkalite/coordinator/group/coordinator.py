"""The group coordinator: the one entry of every group request, and its clock.

Classic groups are run by ``classic_coordinator`` (JoinGroup, SyncGroup, Heartbeat,
LeaveGroup), KIP-848 consumer groups by ``consumer_coordinator`` (ConsumerGroupHeartbeat,
and the classic requests of a consumer group's classic members). This module sends each
request to the right one, ticks both (sessions, rebalance deadlines), and checks commits
and offset requests against whichever kind of group holds the id. What is kept (groups,
committed offsets) and how it is written to ``__consumer_offsets`` is the
``GroupMetadataManager``'s job. One asyncio task (the broker's loop) owns all of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Sequence

from kafkalite.coordinator.group.classic_coordinator import ClassicGroupCoordinator
from kafkalite.coordinator.group.consumer_coordinator import ConsumerGroupCoordinator
from kafkalite.coordinator.group.consumer_group_config import ConsumerGroupConfig
from kafkalite.coordinator.group.consumer_group_heartbeat import TopicsView
from kafkalite.coordinator.group.consumer_protocol import subscribed_topics
from kafkalite.coordinator.group.group import Group, GroupState
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
        self.classic = ClassicGroupCoordinator(
            self.manager, now_ms, emit, initial_rebalance_delay_ms
        )
        self.consumer = ConsumerGroupCoordinator(
            self.manager, topics, consumer_config, now_ms, emit, self.classic.end_rebalance
        )
        """KIP-848 consumer groups, beside the classic ones (the same id space and log)."""
        self.now_ms = now_ms
        self.emit = emit
        self.min_session_ms = min_session_ms
        self.max_session_ms = max_session_ms
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

    # ---- the classic protocol's requests: to a classic group, or to a consumer group ------

    async def join(self, req: JoinRequest) -> JoinResult:
        """JoinGroup: a consumer group with members takes the member in as a classic member
        (KIP-848's migration); otherwise a classic group does (an empty consumer group
        gives way)."""
        self.check_coordinator(req.group_id)
        self.wake()  # its session, and the rebalance it may start, are watched from now
        if not self.min_session_ms() <= req.session_timeout_ms <= self.max_session_ms():
            return JoinResult(ErrorCode.invalid_session_timeout)
        consumer_group = self.manager.consumer_groups.get(req.group_id)
        if consumer_group is not None and consumer_group.members:
            return await self.consumer.classic_join(consumer_group, req)
        await self.consumer.conversion.make_way_for_classic_group(req.group_id)
        return await self.classic.join(req)

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
        return await self.classic.sync(
            group_id, generation_id, member_id, assignments, group_instance_id
        )

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
        else:
            self.classic.heartbeat(group_id, generation_id, member_id, group_instance_id)

    def leave(
        self,
        group_id: str,
        members: Iterable[tuple[str, str | None]],
        reasons: Sequence[str | None] = (),
    ) -> list[ErrorCode]:
        self.check_coordinator(group_id)
        consumer_group = self.manager.consumer_groups.get(group_id)
        if consumer_group is not None:
            return self.consumer.classic_leave(consumer_group, members)
        return self.classic.leave(group_id, members, reasons)

    # ---- time ----------------------------------------------------------------------

    async def _tick_forever(self) -> None:
        while True:
            await self._ticks.sleep(TICK_S if self.watching() else IDLE_TICK_S)
            self.tick()

    def watching(self) -> bool:
        """Some member's session or some rebalance can run out."""
        return self.classic.watching() or self.consumer.watching()

    def wake(self) -> None:
        """Check now: partition leaderships changed (the groups of partitions this broker
        no longer leads are dropped at once), or a member joined."""
        self._ticks.wake()

    def tick(self) -> None:
        """Drop the groups of partitions this broker no longer leads (their parked
        requests are told NOT_COORDINATOR); expire silent members; end joins whose
        deadline or initial delay has passed."""
        if self.manager.resign_lost_partitions():
            self.classic.fail_waiters_of_unknown_groups()
        self.consumer.tick()
        self.classic.tick()

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
        a consumer group, the member and its epoch (``ConsumerGroup``); for a classic
        group, without a generation, an empty (or new, "simple") group takes commits from
        anyone; a member must be current; a non-empty group takes no anonymous commits. A
        member's commit to a group that does not exist gets GROUP_ID_NOT_FOUND (v9+) or
        ILLEGAL_GENERATION (older versions)."""
        self.check_coordinator(group_id)
        consumer_group = self.manager.consumer_groups.get(group_id)
        if consumer_group is not None:
            consumer_group.validate_offset_commit(
                member_id, generation_id, group_instance_id, False, api_version
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
            self.classic.member(group, member_id, generation_id, group_instance_id)
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
            consumer_group.validate_offset_commit(
                member_id, generation_id, group_instance_id, True, 0
            )
        else:
            group = self.groups.setdefault(group_id, Group(group_id))
            if generation_id >= 0 or member_id:
                self.classic.member(group, member_id, generation_id, group_instance_id)
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
