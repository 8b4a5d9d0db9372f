"""Offsets committed inside a transaction: pending until the transaction's marker.

A consume-transform-produce loop commits its consumed offsets with TxnOffsetCommit as part
of its transaction. The group coordinator writes them to ``__consumer_offsets`` at once,
as a transactional batch of the producer, but they count only if the transaction commits:
until the marker arrives on that ``__consumer_offsets`` partition they are *pending* (an
OffsetFetch with ``require_stable`` gets UNSTABLE_OFFSET_COMMIT for them); a commit marker
makes them the group's committed offsets, an abort marker drops them. Replaying the
partition after a failover reaches the same state, because both the offsets and the
markers are in its log.

A pending offset replaces the committed one only if it was written after it: a plain
OffsetCommit appended later than the transactional one wins (Kafka's rule). Pure; owned by
the group coordinator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kafkalite.coordinator.group.offsets_log import CommittedOffset

GroupPartition = tuple[str, str, int]  # (group id, topic, partition)


@dataclass(frozen=True, slots=True)
class PendingOffset:
    group_id: str
    topic: str
    partition: int
    committed: CommittedOffset
    log_offset: int  # where in __consumer_offsets it was written

    @property
    def key(self) -> GroupPartition:
        return self.group_id, self.topic, self.partition


class TransactionalOffsets:
    def __init__(self) -> None:
        self.pending: dict[int, dict[GroupPartition, PendingOffset]] = {}

    def add(self, producer_id: int, offsets: list[PendingOffset]) -> None:
        mine = self.pending.setdefault(producer_id, {})
        for offset in offsets:
            mine[offset.key] = offset

    def take(self, producer_id: int) -> list[PendingOffset]:
        """The producer's transaction ended (either way): its pending offsets, removed."""
        return list(self.pending.pop(producer_id, {}).values())

    def is_pending(self, group_id: str, topic: str, partition: int) -> bool:
        key = (group_id, topic, partition)
        return any(key in offsets for offsets in self.pending.values())

    def pending_of(self, group_id: str) -> set[tuple[str, int]]:
        return {
            (topic, partition)
            for offsets in self.pending.values()
            for (group, topic, partition) in offsets
            if group == group_id
        }

    def forget_groups(self, doomed: Callable[[str], bool]) -> None:
        for producer_id in list(self.pending):
            kept = {k: v for k, v in self.pending[producer_id].items() if not doomed(k[0])}
            if kept:
                self.pending[producer_id] = kept
            else:
                del self.pending[producer_id]
