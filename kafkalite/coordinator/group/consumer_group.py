"""One consumer group under the KIP-848 protocol (``group.protocol=consumer``): its epochs,
members and target assignment (Kafka's ``ConsumerGroup``).

Three epochs tell where the group is::

    group epoch        bumped when the membership or a subscription changes (a member
                       joins, leaves, is fenced, subscribes to other topics; a subscribed
                       topic is created or grows)
    assignment epoch   the group epoch the target assignment was computed for
    member epoch       the target assignment epoch each member has reached

and the group's state follows from them, never set by hand::

    Empty        no members
    Assigning    group epoch > assignment epoch: a new target assignment is due
    Reconciling  some member has not reached the assignment epoch (or is still
                 revoking or waiting for partitions)
    Stable       every member holds exactly its target assignment

Each partition that a member holds (assigned or still being revoked) carries that member's
epoch here (``partition_epoch``): -1 means free, so reconciliation can tell whether a
partition of a member's target may be handed to it yet. This is what rules out two
members consuming one partition. Changed only by replaying records
(``consumer_group_records``); timers (sessions, revocation deadlines) are the
coordinator's.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from kafkalite.coordinator.group.consumer_member import Assignment, ConsumerGroupMember
from kafkalite.protocol.errors import ErrorCode, KafkaError

OFFSET_COMMIT_MIN_VERSION = 9
"""A member of a consumer group commits with OffsetCommit v9 or later (its member epoch)."""


class ConsumerGroupState(enum.Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    """A subscribed topic as the last target assignment saw it."""

    topic_id: str
    name: str
    partitions: int


def preferred_assignor(members: Iterable[ConsumerGroupMember], default: str) -> str:
    """The server assignor most members ask for, else ``default`` (Kafka's
    ``computePreferredServerAssignor``; a tie goes to the first name)."""
    counts = Counter(m.server_assignor for m in members if m.server_assignor)
    if not counts:
        return default
    return min(counts, key=lambda name: (-counts[name], name))


class PartitionOwnershipError(RuntimeError):
    """Two members would hold one partition: the records contradict each other."""


@dataclass(slots=True)
class ConsumerGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ConsumerGroupMember] = field(default_factory=dict)
    target_assignment: dict[str, Assignment] = field(default_factory=dict)
    subscription_metadata: dict[str, TopicMetadata] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)
    """Instance id -> the member id holding it."""
    partition_epochs: dict[tuple[str, int], int] = field(default_factory=dict)

    @property
    def state(self) -> ConsumerGroupState:
        """Kafka's ``maybeUpdateGroupState``, computed."""
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if all(m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return ConsumerGroupState.STABLE
        return ConsumerGroupState.RECONCILING

    def partition_epoch(self, topic_id: str, partition: int) -> int:
        """The epoch of the member holding the partition; -1 when nobody does."""
        return self.partition_epochs.get((topic_id, partition), -1)

    def static_member(self, instance_id: str | None) -> ConsumerGroupMember | None:
        member_id = None if instance_id is None else self.static_members.get(instance_id)
        return None if member_id is None else self.members.get(member_id)

    def target_of(self, member_id: str, instance_id: str | None = None) -> Assignment:
        """A member's target assignment; a static member replacing its instance's
        previous member gets that one's (Kafka's ``targetAssignment(memberId, instanceId)``)."""
        found = self.target_assignment.get(member_id)
        if found is None and instance_id is not None:
            previous = self.static_members.get(instance_id)
            found = self.target_assignment.get(previous) if previous else None
        return found or {}

    def subscribed_topic_names(self) -> Counter[str]:
        """How many members subscribe to each topic by name."""
        return Counter(name for m in self.members.values() for name in m.subscribed_topic_names)

    # ---- what offset requests check ------------------------------------------------

    def validate_offset_commit(
        self,
        member_id: str,
        member_epoch: int,
        group_instance_id: str | None,
        transactional: bool,
        version: int,
    ) -> None:
        """Kafka's ``ConsumerGroup.validateOffsetCommit``: anyone may commit to an empty
        group without an epoch (the admin client); a transaction may commit without naming
        a member; otherwise the member must exist, commit with v9+, at its epoch (a classic
        member: with any version, at its epoch as generation, else ILLEGAL_GENERATION)."""
        if member_epoch < 0 and not self.members:
            return
        if transactional and member_epoch == -1 and not member_id and group_instance_id is None:
            return
        member = self.members.get(member_id)
        if member is None:
            raise KafkaError(
                ErrorCode.unknown_member_id,
                f"Member {member_id} is not a member of group {self.group_id}.",
            )
        if not transactional and not member.uses_classic_protocol:
            _check_commit_version(version)
        _check_member_epoch(member_epoch, member)

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        """Kafka's ``ConsumerGroup.validateOffsetFetch``: a fetch naming no member (the
        admin client) is taken; a member must exist and be at its epoch."""
        if member_id is None and member_epoch < 0:
            return
        member = self.members.get(member_id or "")
        if member is None:
            raise KafkaError(
                ErrorCode.unknown_member_id,
                f"Member {member_id} is not a member of group {self.group_id}.",
            )
        _check_member_epoch(member_epoch, member)

    # ---- changes, made only by replaying records -----------------------------------

    def update_member(self, member: ConsumerGroupMember) -> None:
        old = self.members.get(member.member_id)
        if old is not None:
            self._release(old)
            if old.instance_id is not None and old.instance_id != member.instance_id:
                self.static_members.pop(old.instance_id, None)
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        self._hold(member)

    def remove_member(self, member_id: str) -> None:
        old = self.members.pop(member_id, None)
        if old is None:
            return
        self._release(old)
        if old.instance_id is not None and self.static_members.get(old.instance_id) == member_id:
            del self.static_members[old.instance_id]

    def _release(self, member: ConsumerGroupMember) -> None:
        for tp in member.owned_partitions():
            self.partition_epochs.pop(tp, None)

    def _hold(self, member: ConsumerGroupMember) -> None:
        for tp in member.owned_partitions():
            if tp in self.partition_epochs:
                raise PartitionOwnershipError(
                    f"group {self.group_id}: {tp} is held at epoch {self.partition_epochs[tp]} "
                    f"when member {member.member_id} takes it"
                )
            self.partition_epochs[tp] = member.member_epoch


def _check_commit_version(version: int) -> None:
    if version < OFFSET_COMMIT_MIN_VERSION:
        raise KafkaError(
            ErrorCode.unsupported_version,
            "OffsetCommit version 9 or above must be used by members using the modern "
            "group protocol",
        )


def _check_member_epoch(received: int, member: ConsumerGroupMember) -> None:
    """Kafka's ``validateMemberEpoch``: a classic member's epoch is its generation."""
    if received == member.member_epoch:
        return
    if member.uses_classic_protocol:
        raise KafkaError(
            ErrorCode.illegal_generation,
            f"The received generation id {received} does not match the expected "
            f"generation id {member.member_epoch}.",
        )
    raise KafkaError(
        ErrorCode.stale_member_epoch,
        f"The received member epoch {received} does not match the expected member epoch "
        f"{member.member_epoch}.",
    )
