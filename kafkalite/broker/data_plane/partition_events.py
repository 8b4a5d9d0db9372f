"""What a committed partition change means, told as events by the partition's (new) leader.

The metadata record says only what the partition is now; comparing it with what it was
tells a student what happened: the ISR shrank or grew, an out-of-sync replica was elected
(unclean), a reassignment started or ended. Only the leader reports, so each change is
told once.
"""

from __future__ import annotations

from kafkalite.events import EventSink, EventType
from kafkalite.metadata.image import PartitionRegistration
from kafkalite.metadata.records import RECOVERING, PartitionChangeRecord


def emit_partition_change(
    emit: EventSink,
    broker_id: int,
    topic: str,
    record: PartitionChangeRecord,
    before: PartitionRegistration,
    after: PartitionRegistration,
) -> None:
    """What a partition change means, reported by its (new) leader: ISR changes, an
    unclean election, a reassignment starting or ending."""
    if after.leader != broker_id:
        return
    partition = record.partition
    _emit_isr_change(emit, topic, partition, before.isr, after.isr)
    if record.leader_recovery_state == RECOVERING:
        emit(
            EventType.UNCLEAN_LEADER_ELECTED,
            topic=topic,
            partition=partition,
            leader=broker_id,
            leader_epoch=after.leader_epoch,
            previous_isr=list(before.isr),
        )
    if after.is_reassigning and (
        not before.is_reassigning or after.target_replicas != before.target_replicas
    ):
        emit(
            EventType.REASSIGNMENT_STARTED,
            topic=topic,
            partition=partition,
            target=list(after.target_replicas),
            adding=list(after.adding_replicas),
            removing=list(after.removing_replicas),
        )
    elif before.is_reassigning and not after.is_reassigning:
        emit(
            EventType.REASSIGNMENT_COMPLETED,
            topic=topic,
            partition=partition,
            replicas=list(after.replicas),
            removed=sorted(set(before.replicas) - set(after.replicas)),
            cancelled=set(after.replicas) != set(before.target_replicas),
        )


def _emit_isr_change(
    emit: EventSink, topic: str, partition: int, before: tuple[int, ...], after: tuple[int, ...]
) -> None:
    """ISR changes, reported by the partition's leader (the one that proposed them)."""
    removed = sorted(set(before) - set(after))
    added = sorted(set(after) - set(before))
    if removed:
        emit(
            EventType.ISR_SHRUNK,
            topic=topic,
            partition=partition,
            removed=removed,
            isr=list(after),
        )
    if added:
        emit(
            EventType.ISR_EXPANDED,
            topic=topic,
            partition=partition,
            added=added,
            isr=list(after),
        )
