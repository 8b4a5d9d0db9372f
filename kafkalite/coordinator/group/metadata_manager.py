"""What the group coordinator keeps: groups and committed offsets, and where it keeps them.

Kafka's ``GroupMetadataManager``: it owns the coordinator's memory of groups and offsets,
writes every change to ``__consumer_offsets`` (acknowledged only once committed there) and
rebuilds that memory from the log whenever this broker leads an offsets partition anew. The
membership protocol (joins, syncs, heartbeats) lives in ``coordinator``; this module never
waits for members, only for the log. Owned by the broker's event loop; not thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kafkalite.coordinator.group.group import Group, GroupState
from kafkalite.coordinator.group.offsets_log import (
    CommittedOffset,
    OffsetsTopic,
    decode,
    group_record,
    offset_record,
    offset_tombstone,
    partition_for,
)
from kafkalite.events import EventType
from kafkalite.protocol.errors import ErrorCode, KafkaError

EventSink = Callable[..., None]


class GroupMetadataManager:
    def __init__(self, offsets: OffsetsTopic, now_ms: Callable[[], int], emit: EventSink) -> None:
        self.offsets = offsets
        self.now_ms = now_ms
        self.emit = emit
        self.groups: dict[str, Group] = {}
        self.committed: dict[str, dict[tuple[str, int], CommittedOffset]] = {}
        self._loaded: dict[int, int] = {}  # offsets partition -> leader epoch loaded in

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
            elif key.get("type") == "group" and value is None:  # DeleteGroups' tombstone
                self.groups.pop(group_id, None)
                self.committed.pop(group_id, None)
            elif key.get("type") == "group" and value is not None:
                group = self.groups.setdefault(group_id, Group(group_id))
                group.generation_id = max(group.generation_id, int(value["generation"]))
                group.protocol_type = value.get("protocol_type")
        self.emit(EventType.GROUP_PARTITION_LOADED, partition=partition)

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

    async def store_group(self, group: Group) -> None:
        partition = self.check_coordinator(group.group_id)
        value = {
            "protocol_type": group.protocol_type,
            "generation": group.generation_id,
            "protocol": group.protocol_name,
            "leader": group.leader_id,
            "members": sorted(group.members),
        }
        await self.offsets.append(partition, [group_record(group.group_id, value, self.now_ms())])

    async def delete_group(self, group_id: str) -> ErrorCode:
        """DeleteGroups: only a group without members can go; its offsets go with it."""
        try:
            partition = self.check_coordinator(group_id)
        except KafkaError as exc:
            return exc.code
        group = self.groups.get(group_id)
        if group is None or group.state == GroupState.DEAD:
            return ErrorCode.group_id_not_found
        if group.state != GroupState.EMPTY:
            return ErrorCode.non_empty_group
        now = self.now_ms()
        committed = self.committed.get(group_id, {})
        records = [offset_tombstone(group_id, t, p, now) for t, p in committed]
        records.append(group_record(group_id, None, now))
        await self.offsets.append(partition, records)
        group.transition(GroupState.DEAD)
        self.groups.pop(group_id, None)
        self.committed.pop(group_id, None)
        self.emit(EventType.GROUP_DELETED, group=group_id)
        return ErrorCode.none

    # ---- offsets -------------------------------------------------------------------

    async def store_offsets(
        self, group_id: str, offsets: dict[tuple[str, int], CommittedOffset]
    ) -> None:
        partition = self.check_coordinator(group_id)
        records = [offset_record(group_id, t, p, c) for (t, p), c in offsets.items()]
        await self.offsets.append(partition, records)
        self.committed.setdefault(group_id, {}).update(offsets)

    def fetch_offsets(self, group_id: str) -> dict[tuple[str, int], CommittedOffset]:
        self.check_coordinator(group_id)
        return dict(self.committed.get(group_id, {}))

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
