"""How a partition's leader and ISR change when brokers come and go (Kafka's
``PartitionChangeBuilder``). Pure functions over a partition's registration.

The rules the labs turn on:

- A new leader comes from the ISR, in replica order (the first replica is the "preferred"
  leader), and must be alive (registered and unfenced).
- With no live ISR member the partition goes offline (leader -1) and keeps its last ISR,
  so that the last in-sync replica can lead again when it returns - unless
  ``unclean.leader.election.enable`` lets any live replica lead, accepting that records
  only the old ISR had are lost.
- The ISR never shrinks to nothing: its last member stays, even fenced, as the record of
  who has every committed record.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from kafkalite.metadata.image import PartitionRegistration
from kafkalite.metadata.records import NO_LEADER


@dataclass(frozen=True, slots=True)
class Change:
    """A partition's new leader and/or ISR; ``None`` means unchanged."""

    leader: int | None = None
    isr: tuple[int, ...] | None = None
    unclean: bool = False

    @property
    def is_empty(self) -> bool:
        return self.leader is None and self.isr is None


def choose_leader(
    partition: PartitionRegistration, live: Collection[int], unclean: bool
) -> tuple[int, bool]:
    """``(leader, was_unclean)``: the first live ISR member in replica order; else, if
    allowed, the first live replica; else NO_LEADER."""
    for replica in partition.replicas:
        if replica in partition.isr and replica in live:
            return replica, False
    if unclean:
        for replica in partition.replicas:
            if replica in live:
                return replica, True
    return NO_LEADER, False


def without_broker(
    partition: PartitionRegistration, broker: int, live: Collection[int], unclean: bool
) -> Change:
    """``broker`` is fenced or shutting down: take it out of the ISR and, if it led, elect
    another leader. ``live`` must not contain ``broker``."""
    isr = partition.isr
    if broker in isr and len(isr) > 1:
        isr = tuple(r for r in isr if r != broker)
    new_isr = isr if isr != partition.isr else None
    if partition.leader != broker:
        return Change(isr=new_isr)
    leader, was_unclean = choose_leader(
        PartitionRegistration(partition.replicas, isr, NO_LEADER, 0, 0), live, unclean
    )
    if was_unclean:
        return Change(leader=leader, isr=(leader,), unclean=True)
    return Change(leader=leader, isr=new_isr)


def elect_if_offline(
    partition: PartitionRegistration, live: Collection[int], unclean: bool
) -> Change:
    """A leaderless partition gets a leader once one of its ISR (or, unclean, any replica)
    is alive again."""
    if partition.leader != NO_LEADER:
        return Change()
    leader, was_unclean = choose_leader(partition, live, unclean)
    if leader == NO_LEADER:
        return Change()
    if was_unclean:
        return Change(leader=leader, isr=(leader,), unclean=True)
    return Change(leader=leader)


def preferred_leader(partition: PartitionRegistration, live: Collection[int]) -> Change:
    """Move leadership back to the first replica if it is alive and in the ISR."""
    preferred = partition.replicas[0]
    if partition.leader == preferred or preferred not in partition.isr or preferred not in live:
        return Change()
    return Change(leader=preferred)
