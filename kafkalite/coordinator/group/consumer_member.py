"""One member of a consumer group under the KIP-848 protocol: what it asked for and what it
holds, as an immutable value (Kafka's ``ConsumerGroupMember``).

A member's epoch is the version of the group's target assignment it has reached. It moves
in steps, one per heartbeat at most, through the member states of Kafka's reconciliation
(``reconciliation.reconcile`` computes each step)::

    STABLE ------------------- a newer target assignment ----------------------+
      ^                                                                          |
      |   +-- it must give partitions up: UNREVOKED_PARTITIONS (same epoch) <---+
      |   |        | it reports them gone (its owned partitions)                 |
      |   v        v                                                             |
      +-- the new epoch, with what is free now; partitions still held by others: |
          UNRELEASED_PARTITIONS (new epoch), until their owners let them go <----+

``assigned_partitions`` are what the member may consume now; ``partitions_pending_revocation``
what it still holds but must give up before it moves to the next epoch. Partitions are
named by topic id, as the protocol names them.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

Assignment = Mapping[str, frozenset[int]]
"""Partitions by topic id."""

LEAVE_GROUP_MEMBER_EPOCH = -1
"""The epoch a member sends to leave the group."""
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
"""The epoch a static member sends to leave for now: its instance id keeps its place."""


class MemberState(enum.Enum):
    STABLE = "STABLE"
    UNREVOKED_PARTITIONS = "UNREVOKED_PARTITIONS"
    UNRELEASED_PARTITIONS = "UNRELEASED_PARTITIONS"


def assignment(pairs: Iterable[tuple[str, Iterable[int]]]) -> dict[str, frozenset[int]]:
    """An assignment from ``(topic id, partitions)`` pairs, without empty topics."""
    result: dict[str, frozenset[int]] = {}
    for topic_id, partitions in pairs:
        merged = result.get(topic_id, frozenset()) | frozenset(partitions)
        if merged:
            result[topic_id] = merged
    return result


def partition_count(partitions: Assignment) -> int:
    return sum(len(p) for p in partitions.values())


def is_subset(owned: Assignment | None, of: Assignment) -> bool:
    """Every partition in ``owned`` is in ``of`` (Kafka's ``isSubset``); None is not."""
    if owned is None:
        return False
    return all(
        partitions <= of.get(topic_id, frozenset()) for topic_id, partitions in owned.items()
    )


@dataclass(frozen=True, slots=True)
class ClassicMemberMetadata:
    """A member that speaks the classic protocol (JoinGroup, SyncGroup, Heartbeat) inside a
    consumer group (Kafka's ``ClassicMemberMetadata``): its session timeout, and the
    protocols of its JoinGroup, kept to answer it in its own assignment format and to give
    it back to a classic group if the group is converted back."""

    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupMember:
    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str = ""
    server_assignor: str | None = None
    rebalance_timeout_ms: int = -1
    assigned_partitions: Assignment = field(default_factory=dict)
    partitions_pending_revocation: Assignment = field(default_factory=dict)
    classic: ClassicMemberMetadata | None = None
    """Set for a member of the classic protocol (upgraded with its group, or joined since)."""

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic is not None

    def is_reconciled_to(self, target_epoch: int) -> bool:
        """It holds exactly the target assignment of ``target_epoch`` (Kafka's
        ``isReconciledTo``)."""
        return self.state == MemberState.STABLE and self.member_epoch == target_epoch

    def moved(
        self,
        epoch: int,
        state: MemberState,
        assigned: Assignment,
        pending_revocation: Assignment,
    ) -> ConsumerGroupMember:
        """A step of reconciliation: at ``epoch`` (the epoch it was at becomes its previous
        one, Kafka's ``updateMemberEpoch``), in ``state``, holding these partitions."""
        return replace(
            self,
            member_epoch=epoch,
            previous_member_epoch=self.member_epoch,
            state=state,
            assigned_partitions=assigned,
            partitions_pending_revocation=pending_revocation,
        )

    def owned_partitions(self) -> set[tuple[str, int]]:
        """Everything it holds: assigned, and not yet revoked."""
        return {
            (topic_id, p)
            for held in (self.assigned_partitions, self.partitions_pending_revocation)
            for topic_id, partitions in held.items()
            for p in partitions
        }
