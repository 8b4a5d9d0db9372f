"""Reconciliation: one member's next step towards the group's target assignment (Kafka's
``CurrentAssignmentBuilder``), the heart of KIP-848's incremental rebalance.

No member ever waits for the whole group. Each heartbeat moves the one member that sent it
as far as it safely can:

* partitions it holds that the target gives to others are revoked first: it stays at its
  epoch (UNREVOKED_PARTITIONS) until its heartbeat no longer lists them as owned;
* then it moves to the target's epoch and gets the partitions that are free;
* partitions of its target that another member still holds (their epoch in the group is
  not -1) wait (UNRELEASED_PARTITIONS) until that member lets them go.

So a partition is never consumed by two members at once, and the members that keep their
partitions keep consuming throughout: there is no stop-the-world phase.
"""

from __future__ import annotations

from collections.abc import Callable

from kafkalite.coordinator.group.consumer_member import (
    Assignment,
    ConsumerGroupMember,
    MemberState,
)

PartitionEpoch = Callable[[str, int], int]
"""The epoch of the member holding a partition (by topic id), -1 if nobody holds it."""


def reconcile(
    member: ConsumerGroupMember,
    target_epoch: int,
    target: Assignment,
    partition_epoch: PartitionEpoch,
    owned: Assignment | None,
) -> ConsumerGroupMember:
    """The member after this heartbeat; the same member when it cannot move yet.

    ``owned`` is what the member's heartbeat says it holds (None when it did not say:
    then it is taken to hold everything it was given)."""
    if member.state == MemberState.UNREVOKED_PARTITIONS and _owns_any(
        owned, member.partitions_pending_revocation
    ):
        return member  # still revoking: it cannot move on
    if member.state == MemberState.STABLE and member.member_epoch == target_epoch:
        return member
    return _next_assignment(member, target_epoch, target, partition_epoch, owned)


def _next_assignment(
    member: ConsumerGroupMember,
    target_epoch: int,
    target: Assignment,
    partition_epoch: PartitionEpoch,
    owned: Assignment | None,
) -> ConsumerGroupMember:
    assigned: dict[str, frozenset[int]] = {}
    revoking: dict[str, frozenset[int]] = {}
    to_assign: dict[str, frozenset[int]] = {}
    unreleased = False
    for topic_id in sorted(target.keys() | member.assigned_partitions.keys()):
        wanted = target.get(topic_id, frozenset())
        current = member.assigned_partitions.get(topic_id, frozenset())
        kept = current & wanted
        own_revoking = member.partitions_pending_revocation.get(topic_id, frozenset())
        free = {p for p in wanted - kept if partition_epoch(topic_id, p) == -1 or p in own_revoking}
        unreleased = unreleased or len(free) < len(wanted - kept)
        if kept:
            assigned[topic_id] = kept
        if current - kept:
            revoking[topic_id] = current - kept
        if free:
            to_assign[topic_id] = frozenset(free)
    if revoking and _owns_any(owned, revoking):
        # give these up first, at the epoch it is at
        return member.moved(
            member.member_epoch, MemberState.UNREVOKED_PARTITIONS, assigned, revoking
        )
    for topic_id, partitions in to_assign.items():
        assigned[topic_id] = assigned.get(topic_id, frozenset()) | partitions
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return member.moved(target_epoch, state, assigned, {})


def _owns_any(owned: Assignment | None, partitions: Assignment) -> bool:
    """The member still holds one of ``partitions`` (unknown: it is taken to)."""
    if owned is None:
        return True
    return any(owned.get(topic_id, frozenset()) & held for topic_id, held in partitions.items())
