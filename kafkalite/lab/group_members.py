"""A consumer group's members and what each one reads, as the group coordinator says
(DescribeGroups through confluent-kafka's admin client). The dashboard's "consumer
groups" tab and ``lab.members(group)`` both read it here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from confluent_kafka.admin import AdminClient


@dataclass(frozen=True)
class GroupMember:
    """One consumer of a group, as the group coordinator describes it."""

    client_id: str
    member_id: str
    group_instance_id: str | None
    """Set for a static member (KIP-345): it keeps its assignment across a restart."""
    partitions: tuple[tuple[str, int], ...]
    """Its assignment: the partitions it reads now."""


@dataclass(frozen=True)
class GroupView:
    """A consumer group's members and who reads which partition (DescribeGroups)."""

    group: str
    state: str
    """Kafka's group states: Empty, PreparingRebalance, CompletingRebalance, Stable, Dead."""
    assignor: str
    members: tuple[GroupMember, ...]

    def owner(self, topic: str, partition: int) -> GroupMember | None:
        return next((m for m in self.members if (topic, partition) in m.partitions), None)


def describe_groups(
    admin: AdminClient, groups: list[str], timeout_s: float
) -> tuple[GroupView, ...]:
    """Each group's state, assignor and members with their assignment (bounded waits)."""
    if not groups:
        return ()
    futures = admin.describe_consumer_groups(groups, request_timeout=timeout_s)
    views = []
    for group in groups:
        answer: Any = futures[group].result(timeout=timeout_s * 2)
        members = tuple(
            GroupMember(
                client_id=m.client_id,
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                partitions=tuple(
                    (tp.topic, tp.partition)
                    for tp in (m.assignment.topic_partitions if m.assignment else [])
                ),
            )
            for m in answer.members
        )
        state = getattr(answer.state, "name", str(answer.state))
        views.append(GroupView(group, _state_name(state), answer.partition_assignor or "", members))
    return tuple(views)


def _state_name(state: str) -> str:
    """confluent-kafka's enum name (``PREPARING_REBALANCING``) as Kafka spells the state."""
    return {
        "STABLE": "Stable",
        "EMPTY": "Empty",
        "DEAD": "Dead",
        "PREPARING_REBALANCING": "PreparingRebalance",
        "COMPLETING_REBALANCING": "CompletingRebalance",
    }.get(state, state.title())
