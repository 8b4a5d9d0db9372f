"""Moving a partition's replicas to other brokers (KIP-455's reassignment, as KRaft does it).

A reassignment first adds the new replicas, and removes the old ones only once every
target replica is in sync, so the partition never has fewer in-sync copies than before::

    before     replicas [1, 2, 3]                          isr [1, 2, 3]
    start      replicas [1, 2, 4, 3]  adding [4]  removing [3]   (target first, then removing)
               broker 4 creates the partition and fetches from the leader
    catch-up   the leader adds 4 to the ISR (AlterPartition); all of [1, 2, 4] are in sync:
    complete   replicas [1, 2, 4]                          isr [1, 2, 4]
               broker 3 is no longer a replica and deletes its copy

A removed leader hands leadership to a target replica in the ISR at completion. A
reassignment that only reorders replicas completes at once (and changes no leader until a
preferred election). Placing the new partitions of CreatePartitions where a client asks is
checked here too, with the same rules for a replica list. Pure functions over the metadata
image and a partition's registration; they return the ``PartitionChangeRecord`` to append.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from kafkalite.controller.partition_changes import choose_leader
from kafkalite.metadata.image import MetadataImage, PartitionRegistration
from kafkalite.metadata.records import PartitionChangeRecord
from kafkalite.protocol.errors import ErrorCode, KafkaError


def original_replicas(registration: PartitionRegistration) -> tuple[int, ...]:
    """The replicas before the reassignment under way (if any) began."""
    return tuple(r for r in registration.replicas if r not in registration.adding_replicas)


def validate_target(target: Sequence[int], registered: Collection[int]) -> None:
    """Kafka's checks: at least one replica, no duplicates, only registered brokers."""
    if not target:
        raise KafkaError(ErrorCode.invalid_replica_assignment, "The replica list is empty.")
    if len(set(target)) != len(target):
        raise KafkaError(
            ErrorCode.invalid_replica_assignment, f"Duplicate replicas in {list(target)}."
        )
    unknown = sorted(set(target) - set(registered))
    if unknown:
        raise KafkaError(ErrorCode.invalid_replica_assignment, f"Unknown brokers {unknown}.")


def change_for(
    image: MetadataImage,
    live: Collection[int],
    topic: str,
    index: int,
    target: Sequence[int] | None,
) -> PartitionChangeRecord:
    """AlterPartitionReassignments for one partition: start moving it to ``target``, or
    cancel the move under way (``None``)."""
    registration = image.partition(topic, index)
    if registration is None:
        raise KafkaError(ErrorCode.unknown_topic_or_partition)
    topic_id = image.topic_ids[topic]
    if target is None:
        return cancel(topic_id, index, registration, live)
    validate_target(target, image.brokers)
    return start(topic_id, index, registration, target, live)


def validate_new_partitions(
    assignments: Sequence[Sequence[int]],
    new: int,
    replication_factor: int,
    registered: Collection[int],
) -> None:
    """CreatePartitions' assignment, checked as Kafka checks it: one replica list per new
    partition, each with the topic's replication factor, of distinct registered brokers."""
    if len(assignments) != new:
        raise KafkaError(
            ErrorCode.invalid_replica_assignment,
            f"Increasing the number of partitions by {new} but {len(assignments)} "
            "assignments provided.",
        )
    for replicas in assignments:
        if len(replicas) != replication_factor:
            raise KafkaError(
                ErrorCode.invalid_replica_assignment,
                f"Replica assignment {list(replicas)} must have {replication_factor} brokers.",
            )
        validate_target(replicas, registered)


def start(
    topic_id: str,
    partition: int,
    registration: PartitionRegistration,
    target: Sequence[int],
    live: Collection[int],
) -> PartitionChangeRecord:
    """Begin moving the partition to ``target`` (replacing any reassignment under way)."""
    original = original_replicas(registration)
    adding = tuple(r for r in target if r not in original)
    removing = tuple(r for r in original if r not in target)
    started = PartitionChangeRecord(
        topic_id,
        partition,
        replicas=(*target, *removing),
        adding_replicas=adding,
        removing_replicas=removing,
    )
    begun = registration.change(started)
    return maybe_complete(topic_id, partition, begun, live) or started


def cancel(
    topic_id: str, partition: int, registration: PartitionRegistration, live: Collection[int]
) -> PartitionChangeRecord:
    """Go back to the replicas the partition had before the reassignment."""
    if not registration.is_reassigning:
        raise KafkaError(ErrorCode.no_reassignment_in_progress)
    original = original_replicas(registration)
    isr = tuple(r for r in original if r in registration.isr) or registration.isr
    return _settle(topic_id, partition, registration, original, isr, live)


def maybe_complete(
    topic_id: str, partition: int, registration: PartitionRegistration, live: Collection[int]
) -> PartitionChangeRecord | None:
    """Finish the reassignment once every target replica is in the ISR; None until then."""
    if not registration.is_reassigning:
        return None
    target = registration.target_replicas
    if not set(target) <= set(registration.isr):
        return None
    isr = tuple(r for r in target if r in registration.isr)
    return _settle(topic_id, partition, registration, target, isr, live)


def _settle(
    topic_id: str,
    partition: int,
    registration: PartitionRegistration,
    replicas: tuple[int, ...],
    isr: tuple[int, ...],
    live: Collection[int],
) -> PartitionChangeRecord:
    """The partition on ``replicas`` with no reassignment; a leader outside them is replaced."""
    leader = None
    if registration.leader not in replicas:
        settled = PartitionRegistration(replicas, isr, registration.leader, 0, 0)
        leader, _ = choose_leader(settled, live, unclean=False)
    return PartitionChangeRecord(
        topic_id,
        partition,
        leader=leader,
        isr=isr,
        replicas=replicas,
        adding_replicas=(),
        removing_replicas=(),
    )
