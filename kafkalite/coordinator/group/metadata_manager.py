"""What the group coordinator keeps: groups and committed offsets, and where it keeps them.

Kafka's ``GroupMetadataManager``: it owns the coordinator's memory of groups and offsets,
writes every change to ``__consumer_offsets`` (acknowledged only once committed there) and
rebuilds that memory from the log whenever this broker leads an offsets partition anew.
Offsets committed inside a transaction stay pending until its marker (``txn_offsets``). The
membership protocol (joins, syncs, heartbeats) lives in ``coordinator``; this module never
waits for members, only for the log. Owned by the broker's event loop; not thread-safe.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any

from kafkalite.coordinator.chunked_load import ChunkedLoad
from kafkalite.coordinator.group import consumer_group_records
from kafkalite.coordinator.group.consumer_group import ConsumerGroup
from kafkalite.coordinator.group.consumer_group_records import GroupRecord, group_tombstones
from kafkalite.coordinator.group.deletions_while_unloaded import DeletionsWhileUnloaded
from kafkalite.coordinator.group.group import Group, GroupState
from kafkalite.coordinator.group.offsets_log import (
    CommittedOffset,
    OffsetsTopic,
    decode,
    encode,
    group_record,
    group_value,
    offset_record,
    offset_tombstone,
    restore_group,
)
from kafkalite.coordinator.group.txn_offsets import PendingOffset, TransactionalOffsets
from kafkalite.coordinator.partition_loads import LoadState, LogChunk, PartitionLoads
from kafkalite.coordinator.partitioning import partition_for
from kafkalite.events import EventSink, EventType
from kafkalite.protocol.control_records import marker_of_record
from kafkalite.protocol.errors import ErrorCode, KafkaError
from kafkalite.protocol.record_batch import InvalidBatchError
from kafkalite.protocol.records import Record

log = logging.getLogger(__name__)
LOAD_BUFFER_BYTES = 64 * 1024
"""How much of the log a load replays before it yields to the loop (Kafka's
``offsets.load.buffer.size`` is 5 MiB; Python decodes far slower)."""


DeletedOffsets = Callable[[int, list[tuple[str, str, int]]], None]
"""Write these ``(group, topic, partition)`` offsets' tombstones to an offsets partition."""


def _ignore_deleted(partition: int, offsets: list[tuple[str, str, int]]) -> None:
    return None


class GroupMetadataManager:
    def __init__(
        self,
        offsets: OffsetsTopic,
        now_ms: Callable[[], int],
        emit: EventSink,
        tombstone_deleted: DeletedOffsets = _ignore_deleted,
    ) -> None:
        self.offsets = offsets
        self.now_ms = now_ms
        self.emit = emit
        self.tombstone_deleted = tombstone_deleted
        """How offsets of a topic deleted while a partition loaded get their tombstones."""
        self.deletions_while_unloaded = DeletionsWhileUnloaded()
        self.groups: dict[str, Group] = {}
        """Classic groups, and the "simple" groups that only hold offsets."""
        self.consumer_groups: dict[str, ConsumerGroup] = {}
        """KIP-848 groups. A group id is in one of the two, never both."""
        self.committed: dict[str, dict[tuple[str, int], CommittedOffset]] = {}
        self.commit_positions: dict[tuple[str, str, int], int] = {}  # -> its log offset
        self.txn_offsets = TransactionalOffsets()
        self.loads = PartitionLoads()
        self.load_buffer_bytes = LOAD_BUFFER_BYTES
        self._load_tasks: set[asyncio.Task[None]] = set()
        self._writes: set[asyncio.Task[None]] = set()
        """Records written with nobody waiting for them (``store_group_soon``)."""

    # ---- ownership and loading ---------------------------------------------------

    def check_coordinator(self, group_id: str) -> int:
        """The offsets partition of ``group_id``, loaded; NOT_COORDINATOR when not ours,
        COORDINATOR_LOAD_IN_PROGRESS while it is being loaded (the client retries).

        State is reloaded from the log whenever this broker's leadership of the partition
        is a new one (a new leader epoch): in between, another coordinator may have taken
        commits that the memory of an earlier leadership does not have."""
        partition = partition_for(group_id, self.offsets.partition_count())
        epoch = self.offsets.leader_epoch(partition)
        if epoch is None:
            self.loads.resign(partition)
            raise KafkaError(ErrorCode.not_coordinator)
        if self.loads.needs_loading(partition, epoch):
            self._forget(partition)
            self._begin_loading(partition, epoch)
        error = self.loads.error_for(partition, epoch)
        if error != ErrorCode.none:
            raise KafkaError(error)
        return partition

    def resign_lost_partitions(self) -> list[int]:
        """Forget the groups of every loaded partition this broker no longer leads in the
        epoch it loaded it in (Kafka's ``onResignation``); returns those partitions. Their
        new coordinator reloads them from the log; kept here, their members' timers would
        go on expiring members and rebalancing groups on a broker that cannot write them,
        and ``/state`` would show each such group twice. (A partition still loading is
        dropped by its own load when it finds the leadership gone.)"""
        lost = [
            partition
            for partition, owned in self.loads.owned().items()
            if owned.state == LoadState.LOADED
            and self.offsets.leader_epoch(partition) != owned.coordinator_epoch
        ]
        for partition in lost:
            self.loads.resign(partition)
            self._forget(partition)
        return lost

    def is_loading(self) -> bool:
        """Some partition is still being loaded (ListGroups cannot list all groups)."""
        return self.loads.any_loading()

    async def stop(self) -> None:
        """Cancel the loads and writes still running."""
        tasks = [*self._load_tasks, *self._writes]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _forget(self, partition: int) -> None:
        count = self.offsets.partition_count()

        def here(group_id: str) -> bool:
            return partition_for(group_id, count) == partition

        for group_id in [g for g in [*self.groups, *self.consumer_groups] if here(g)]:
            self.groups.pop(group_id, None)
            self.consumer_groups.pop(group_id, None)
            self.committed.pop(group_id, None)
        for key in [k for k in self.commit_positions if here(k[0])]:
            del self.commit_positions[key]
        self.txn_offsets.forget_groups(here)

    def _begin_loading(self, partition: int, epoch: int) -> None:
        """Replay the partition in chunks (``chunked_load``); a failed read forgets it, so
        that the next request starts over."""

        def forget() -> None:
            self.loads.resign(partition)
            self._forget(partition)

        load = ChunkedLoad(
            self.loads,
            partition,
            epoch,
            lambda offset: self.offsets.read_chunk(partition, offset, self.load_buffer_bytes),
            lambda chunk: self._replay_chunk(partition, chunk),
            lambda: self.offsets.leader_epoch(partition) == epoch,
            lambda: self._loaded(partition, epoch),
            forget,
        )
        try:
            task = load.begin()
        except KafkaError:
            forget()
            raise
        if task is not None:
            self._load_tasks.add(task)
            task.add_done_callback(self._load_tasks.discard)

    def _loaded(self, partition: int, epoch: int) -> None:
        """Replayed to its log end: drop the offsets of topics deleted meanwhile."""
        topics = self.deletions_while_unloaded.take(partition, epoch)
        gone = self._drop_offsets(topics.__contains__).get(partition, [])
        if gone:
            self.tombstone_deleted(partition, gone)
        self.emit(EventType.GROUP_PARTITION_LOADED, partition=partition)

    def _replay_chunk(self, partition: int, chunk: LogChunk) -> None:
        """Replay the partition: the latest value per key wins, as compaction would keep;
        offsets committed in a transaction wait for their producer's marker."""
        count = self.offsets.partition_count()
        for header, records in chunk.batches:
            if header.is_control:
                if records:
                    self._replay_marker(header.producer_id, records[0])
                continue
            for record in records:
                decoded = decode(record)
                if decoded is None:
                    continue
                key, value = decoded
                group_id = str(key.get("group"))
                if partition_for(group_id, count) != partition:
                    continue
                if header.is_transactional:
                    self._replay_txn_offset(header.producer_id, key, value, record.offset)
                else:
                    self._replay(group_id, key, value, record.offset)

    def _replay(
        self, group_id: str, key: dict[str, Any], value: dict[str, Any] | None, offset: int
    ) -> None:
        kind = key.get("type")
        if kind == "offset":
            self._offsets_holder(group_id)
            offsets = self.committed.setdefault(group_id, {})
            tp = (str(key["topic"]), int(key["partition"]))
            committed = _committed_offset(value)
            if committed is None:
                offsets.pop(tp, None)
            else:
                offsets[tp] = committed
            self.commit_positions[(group_id, *tp)] = offset
        elif kind == "group" and value is None:  # deleted, or now a consumer group
            self.groups.pop(group_id, None)
        elif kind == "group" and value is not None:
            self.groups[group_id] = restore_group(group_id, value, self.now_ms())
        elif kind in consumer_group_records.RECORD_TYPES:
            # a consumer group takes the place of an empty classic group of its id (whose
            # tombstone came first) or of a simple one (which has no record)
            self.groups.pop(group_id, None)
            consumer_group_records.replay(self.consumer_groups, key, value)

    def _offsets_holder(self, group_id: str) -> None:
        """Offsets committed for a group id that has no group make it a "simple" classic
        group (Kafka's), unless a consumer group holds that id."""
        if group_id not in self.consumer_groups:
            self.groups.setdefault(group_id, Group(group_id))

    def _replay_txn_offset(
        self, producer_id: int, key: dict[str, Any], value: dict[str, Any] | None, offset: int
    ) -> None:
        committed = _committed_offset(value)
        if key.get("type") == "offset" and committed is not None:
            pending = PendingOffset(
                str(key["group"]), str(key["topic"]), int(key["partition"]), committed, offset
            )
            self.txn_offsets.add(producer_id, [pending])

    def _replay_marker(self, producer_id: int, record: Record) -> None:
        try:
            marker = marker_of_record(record)
        except InvalidBatchError:
            return
        self._end_transaction(producer_id, marker.committed)

    def _end_transaction(self, producer_id: int, committed: bool) -> None:
        """The producer's pending offsets count now (unless a plain commit was written
        after them, Kafka's rule), or are dropped."""
        for pending in self.txn_offsets.take(producer_id):
            if committed and self.commit_positions.get(pending.key, -1) < pending.log_offset:
                self._offsets_holder(pending.group_id)
                offsets = self.committed.setdefault(pending.group_id, {})
                offsets[(pending.topic, pending.partition)] = pending.committed
                self.commit_positions[pending.key] = pending.log_offset

    # ---- groups ------------------------------------------------------------------------

    def get_or_create(self, group_id: str) -> Group:
        """The live group (a dead one is replaced by a fresh, empty one)."""
        self.check_coordinator(group_id)
        group = self.groups.get(group_id)
        if group is None or group.state == GroupState.DEAD:
            group = self.groups[group_id] = Group(group_id)
        return group

    def list_groups(self) -> list[Group]:
        return [g for g in self.groups.values() if g.state != GroupState.DEAD]

    def apply(self, group_id: str, records: list[GroupRecord]) -> int:
        """Change a consumer group: replay ``records`` now, so that the next request sees
        their effect (as in Kafka); ``persist`` them next. Returns the group's partition."""
        partition = self.check_coordinator(group_id)
        for key, value in records:
            self._replay(group_id, key, value, -1)
        return partition

    async def persist(self, partition: int, records: list[GroupRecord]) -> None:
        """Append records ``apply`` replayed and wait until they are committed. If the
        append fails the partition is forgotten, to be reloaded from what its log really
        holds; the error says whether to look for the coordinator again."""
        if not records:
            return
        now = self.now_ms()
        try:
            await self.offsets.append(partition, [encode(k, v, now) for k, v in records])
        except KafkaError as exc:
            self.loads.resign(partition)
            self._forget(partition)
            raise KafkaError(_write_error(exc.code), exc.message) from exc

    async def write(self, group_id: str, records: list[GroupRecord]) -> None:
        await self.persist(self.apply(group_id, records), records)

    async def store_group(self, group: Group) -> None:
        partition = self.check_coordinator(group.group_id)
        record = group_record(group.group_id, group_value(group), self.now_ms())
        await self.offsets.append(partition, [record])

    def store_group_soon(self, group: Group) -> None:
        """Write the group's record as it is now, with nobody waiting for it: a group that
        became Empty (Kafka's ``completeClassicGroupJoin`` appends its group metadata
        record then), so that its new generation outlives this coordinator and the next
        one never hands the same generation out twice. As in Kafka a failed write is only
        logged: the log's previous generation then comes back, with no members in it."""
        try:
            partition = self.check_coordinator(group.group_id)
        except KafkaError as exc:
            log.warning("group %s: its empty generation is not written: %s", group.group_id, exc)
            return
        record = group_record(group.group_id, group_value(group), self.now_ms())
        task = asyncio.create_task(self._append_quietly(partition, group.group_id, record))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _append_quietly(self, partition: int, group_id: str, record: Record) -> None:
        try:
            await self.offsets.append(partition, [record])
        except KafkaError as exc:
            log.warning("group %s: its empty generation is not written: %s", group_id, exc)

    async def delete_group(self, group_id: str) -> ErrorCode:
        """DeleteGroups: only a group without members can go; its offsets go with it."""
        try:
            partition = self.check_coordinator(group_id)
        except KafkaError as exc:
            return exc.code
        consumer_group = self.consumer_groups.get(group_id)
        group = self.groups.get(group_id)
        if consumer_group is not None:
            if consumer_group.members:
                return ErrorCode.non_empty_group
        elif group is None or group.state == GroupState.DEAD:
            return ErrorCode.group_id_not_found
        elif group.state != GroupState.EMPTY:
            return ErrorCode.non_empty_group
        now = self.now_ms()
        committed = self.committed.get(group_id, {})
        records = [offset_tombstone(group_id, t, p, now) for t, p in committed]
        if consumer_group is not None:
            records.extend(encode(k, v, now) for k, v in group_tombstones(group_id))
        else:
            records.append(group_record(group_id, None, now))
        await self.offsets.append(partition, records)
        if group is not None:
            group.transition(GroupState.DEAD)
        self.groups.pop(group_id, None)
        self.consumer_groups.pop(group_id, None)
        self.committed.pop(group_id, None)
        self.emit(EventType.GROUP_DELETED, group=group_id)
        return ErrorCode.none

    # ---- offsets -------------------------------------------------------------------

    async def store_offsets(
        self, group_id: str, offsets: dict[tuple[str, int], CommittedOffset]
    ) -> None:
        partition = self.check_coordinator(group_id)
        records = [offset_record(group_id, t, p, c) for (t, p), c in offsets.items()]
        base = await self.offsets.append(partition, records)
        self.committed.setdefault(group_id, {}).update(offsets)
        for i, (topic, index) in enumerate(offsets):
            self.commit_positions[(group_id, topic, index)] = base + i

    async def store_transactional_offsets(
        self,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        offsets: dict[tuple[str, int], CommittedOffset],
    ) -> None:
        """TxnOffsetCommit: written now as the producer's transactional batch, pending
        until its transaction's marker reaches this partition."""
        partition = self.check_coordinator(group_id)
        records = [offset_record(group_id, t, p, c) for (t, p), c in offsets.items()]
        base = await self.offsets.append(partition, records, producer_id, producer_epoch)
        self.check_coordinator(group_id)  # still ours after the wait, and in the same epoch
        self.txn_offsets.add(
            producer_id,
            [
                PendingOffset(group_id, topic, index, committed, base + i)
                for i, ((topic, index), committed) in enumerate(offsets.items())
            ],
        )

    def complete_transaction(self, partition: int, producer_id: int, committed: bool) -> None:
        """The producer's marker is written (and replicated) on ``partition``: its pending
        offsets there count now, or are dropped. A partition not loaded in its current
        epoch gets the marker from its log when it loads."""
        epoch = self.offsets.leader_epoch(partition)
        if epoch is None or self.loads.loaded_epoch(partition) != epoch:
            return
        self._end_transaction(producer_id, committed)

    def unstable_offsets(self, group_id: str) -> set[tuple[str, int]]:
        """Partitions with an offset committed in a transaction that has not ended."""
        self.check_coordinator(group_id)
        return self.txn_offsets.pending_of(group_id)

    def fetch_offsets(self, group_id: str) -> dict[tuple[str, int], CommittedOffset]:
        self.check_coordinator(group_id)
        return dict(self.committed.get(group_id, {}))

    def forget_topic(self, topic: str) -> dict[int, list[tuple[str, str, int]]]:
        """A topic was deleted: drop every group's offsets for it (Kafka does the same).
        Returns, per offsets partition this broker leads, the ``(group, topic, partition)``
        offsets whose tombstones must be written there. A partition it leads but has not
        loaded drops them once loaded (``deletions_while_unloaded``)."""
        for partition in range(self.offsets.partition_count()):
            epoch = self.offsets.leader_epoch(partition)
            if epoch is not None and self.loads.loaded_epoch(partition) != epoch:
                self.deletions_while_unloaded.remember(partition, epoch, topic)
        return self._drop_offsets(lambda name: name == topic)

    def _drop_offsets(
        self, deleted: Callable[[str], bool]
    ) -> dict[int, list[tuple[str, str, int]]]:
        count = self.offsets.partition_count()
        gone: dict[int, list[tuple[str, str, int]]] = {}
        for group_id, committed in self.committed.items():
            dropped = [tp for tp in committed if deleted(tp[0])]
            for tp in dropped:
                committed.pop(tp)
            partition = partition_for(group_id, count)
            if dropped and self.offsets.leader_epoch(partition) is not None:
                gone.setdefault(partition, []).extend((group_id, t, p) for t, p in dropped)
        return gone

    async def write_tombstones(self, partition: int, offsets: list[tuple[str, str, int]]) -> None:
        now = self.now_ms()
        await self.offsets.append(
            partition, [offset_tombstone(group, t, p, now) for group, t, p in offsets]
        )

    async def delete_offsets(
        self, group_id: str, partitions: Iterable[tuple[str, int]]
    ) -> list[tuple[str, int]]:
        """Forget the committed offsets of ``partitions`` (those the group has); returns
        the partitions whose offsets were deleted."""
        partition = self.check_coordinator(group_id)
        committed = self.committed.get(group_id, {})
        gone = [tp for tp in dict.fromkeys(partitions) if tp in committed]
        if gone:
            now = self.now_ms()
            await self.offsets.append(
                partition, [offset_tombstone(group_id, t, p, now) for t, p in gone]
            )
            for tp in gone:
                committed.pop(tp, None)
        return gone


def _write_error(code: ErrorCode) -> ErrorCode:
    """What a client is told when a coordinator's write fails (Kafka's
    ``handleOperationException``): look for the coordinator again, or retry later."""
    if code in (ErrorCode.not_leader_or_follower, ErrorCode.kafka_storage_error):
        return ErrorCode.not_coordinator
    if code in (
        ErrorCode.unknown_topic_or_partition,
        ErrorCode.not_enough_replicas,
        ErrorCode.not_enough_replicas_after_append,
        ErrorCode.request_timed_out,
    ):
        return ErrorCode.coordinator_not_available
    if code in (ErrorCode.message_too_large, ErrorCode.record_list_too_large):
        return ErrorCode.unknown_server_error
    return code


def _committed_offset(value: dict[str, Any] | None) -> CommittedOffset | None:
    if value is None:
        return None
    return CommittedOffset(
        int(value["offset"]),
        int(value["leader_epoch"]),
        value.get("metadata"),
        int(value["commit_timestamp"]),
    )
