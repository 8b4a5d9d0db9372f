"""Partition leadership and ISRs (Kafka's ``ReplicationControlManager``): ISR changes a
leader asks for, leader elections (preferred, unclean, after a broker is fenced or comes
back), and reassignments. Topics are created and deleted in ``topic_control``.

Pure: each operation reads the image and returns records; nothing changes until they are
committed and replayed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kafkalite.controller import reassignment
from kafkalite.controller.partition_changes import (
    Change,
    elect_if_offline,
    preferred_leader,
    without_broker,
)
from kafkalite.controller.results import ApiResult, ControllerResult
from kafkalite.metadata.image import MetadataImage, PartitionRegistration
from kafkalite.metadata.records import (
    NO_LEADER,
    RECOVERING,
    MetadataRecord,
    PartitionChangeRecord,
)
from kafkalite.protocol.errors import ErrorCode, KafkaError

PREFERRED_ELECTION = 0
UNCLEAN_ELECTION = 1


@dataclass(frozen=True, slots=True)
class AlterPartitionReply:
    error: ErrorCode
    registration: PartitionRegistration | None = None


class ReplicationControlManager:
    def __init__(self, image: MetadataImage) -> None:
        self.image = image

    def changes(self) -> PartitionChanges:
        """A batch of partition changes, each seeing the ones before it."""
        return PartitionChanges(self.image)

    def alter_partition(
        self,
        broker_id: int,
        broker_epoch: int,
        topic: str,
        partition: int,
        leader_epoch: int,
        partition_epoch: int,
        new_isr: tuple[int, ...],
    ) -> ControllerResult[AlterPartitionReply]:
        """A leader shrinks or expands its ISR. Stale requests (an older leader epoch or
        partition epoch) are rejected, so an ISR change can never undo a newer one."""
        current = self.image.brokers.get(broker_id)
        registration = self.image.partition(topic, partition)
        if current is None or current.broker_epoch != broker_epoch:
            return ControllerResult([], AlterPartitionReply(ErrorCode.stale_broker_epoch))
        if registration is None:
            return ControllerResult([], AlterPartitionReply(ErrorCode.unknown_topic_or_partition))
        if registration.leader != broker_id:
            return ControllerResult([], AlterPartitionReply(ErrorCode.not_leader_or_follower))
        if leader_epoch != registration.leader_epoch:
            return ControllerResult([], AlterPartitionReply(ErrorCode.fenced_leader_epoch))
        if partition_epoch != registration.partition_epoch:
            return ControllerResult([], AlterPartitionReply(ErrorCode.invalid_update_version))
        live = self.image.live_broker_ids()
        added = set(new_isr) - set(registration.isr)
        if (
            broker_id not in new_isr
            or not set(new_isr) <= set(registration.replicas)
            or not added <= live
        ):
            return ControllerResult([], AlterPartitionReply(ErrorCode.ineligible_replica))
        ordered = tuple(r for r in registration.replicas if r in new_isr)
        if ordered == registration.isr:
            return ControllerResult([], AlterPartitionReply(ErrorCode.none, registration))
        topic_id = self.image.topic_ids[topic]
        change = PartitionChangeRecord(topic_id, partition, isr=ordered)
        # the replica a reassignment waits for is now in sync: the move completes with it
        change = (
            reassignment.maybe_complete(topic_id, partition, registration.change(change), live)
            or change
        )
        return ControllerResult(
            [change], AlterPartitionReply(ErrorCode.none, registration.change(change))
        )

    def alter_partition_reassignments(
        self, wanted: Sequence[tuple[str, int, Sequence[int] | None]]
    ) -> ControllerResult[list[tuple[str, int, ApiResult]]]:
        """Start (a replica list) or cancel (None) moving each partition; see
        ``reassignment`` for how a move proceeds."""
        records: list[MetadataRecord] = []
        results: list[tuple[str, int, ApiResult]] = []
        for topic, index, target in wanted:
            try:
                record = reassignment.change_for(
                    self.image, self.image.live_broker_ids(), topic, index, target
                )
            except KafkaError as exc:
                results.append((topic, index, ApiResult(exc.code, exc.message)))
                continue
            records.append(record)
            results.append((topic, index, ApiResult()))
        return ControllerResult(records, results)

    def elect_leaders(
        self, election_type: int, partitions: Sequence[tuple[str, int]] | None
    ) -> ControllerResult[list[tuple[str, int, ApiResult]]]:
        """ElectLeaders. Preferred (0): move leadership to each partition's first replica
        (also the automatic leader rebalance). Unclean (1): give a leaderless partition any
        live replica as leader, accepting the loss of what only the old ISR had.
        ``None`` means every partition."""
        live = self.image.live_broker_ids()
        results: list[tuple[str, int, ApiResult]] = []
        records: list[MetadataRecord] = []
        wanted = partitions
        if wanted is None:
            wanted = [
                (t.name, p) for t in self.image.topics_by_id.values() for p in sorted(t.partitions)
            ]
        for topic, index in wanted:
            registration = self.image.partition(topic, index)
            if registration is None:
                results.append((topic, index, ApiResult(ErrorCode.unknown_topic_or_partition)))
                continue
            if election_type == UNCLEAN_ELECTION:
                change = elect_if_offline(registration, live, unclean=True)
                not_done = (
                    ErrorCode.election_not_needed
                    if registration.leader != NO_LEADER
                    else ErrorCode.eligible_leaders_not_available
                )
            else:
                change = preferred_leader(registration, live)
                not_done = (
                    ErrorCode.election_not_needed
                    if registration.leader == registration.replicas[0]
                    else ErrorCode.preferred_leader_not_available
                )
            if change.is_empty:
                results.append((topic, index, ApiResult(not_done)))
                continue
            records.append(
                PartitionChangeRecord(
                    self.image.topic_ids[topic],
                    index,
                    leader=change.leader,
                    isr=change.isr,
                    leader_recovery_state=RECOVERING if change.unclean else None,
                )
            )
            results.append((topic, index, ApiResult()))
        return ControllerResult(records, results)

    def unclean_elections(self, topic: str) -> list[MetadataRecord]:
        """Turning ``unclean.leader.election.enable`` on takes effect at once: an offline
        partition gets any live replica as leader (Kafka does the same)."""
        changes = self.changes()
        live = self.image.live_broker_ids()
        changes.apply_all(
            lambda name, p: elect_if_offline(p, live, unclean=True) if name == topic else Change()
        )
        return changes.records


class PartitionChanges:
    """Partition changes computed one after another, each seeing the ones before it (the
    records are not replayed until committed, so the image alone would not show them)."""

    def __init__(self, image: MetadataImage) -> None:
        self.image = image
        self.records: list[MetadataRecord] = []
        self._scratch: dict[tuple[str, int], PartitionRegistration] = {}

    def apply_all(self, rule: Callable[[str, PartitionRegistration], Change]) -> None:
        for topic in self.image.topics_by_id.values():
            for index, original in sorted(topic.partitions.items()):
                key = (topic.topic_id, index)
                registration = self._scratch.get(key, original)
                change = rule(topic.name, registration)
                if change.is_empty:
                    continue
                record = PartitionChangeRecord(
                    topic.topic_id,
                    index,
                    change.leader,
                    change.isr,
                    RECOVERING if change.unclean else None,
                )
                self.records.append(record)
                self._scratch[key] = registration.change(record)

    def without_broker(self, broker_id: int, live: set[int]) -> None:
        """``broker_id`` is fenced or shutting down: it leaves every ISR it can, and the
        partitions it led get new leaders among ``live`` (which must not hold it)."""
        self.apply_all(lambda name, p: without_broker(p, broker_id, live, self._unclean(name)))

    def elect_offline(self, live: set[int]) -> None:
        """Every leaderless partition gets a leader among ``live``, if it can."""
        self.apply_all(lambda name, p: elect_if_offline(p, live, self._unclean(name)))

    def _unclean(self, topic: str) -> bool:
        return self.image.topic_bool(topic, "unclean.leader.election.enable")
