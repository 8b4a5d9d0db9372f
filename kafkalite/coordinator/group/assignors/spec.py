"""What a server-side assignor is given (Kafka's ``GroupSpec`` and
``SubscribedTopicDescriber``) and what every assignor is."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from kafkalite.coordinator.group.consumer_member import Assignment


class PartitionAssignorError(Exception):
    """The assignor cannot assign (a member subscribed to a topic with no metadata)."""


@dataclass(frozen=True, slots=True)
class MemberSpec:
    """One member: the topics it subscribes to (by id) and its target assignment so far,
    which a sticky assignor keeps as much of as balance allows."""

    subscribed_topic_ids: frozenset[str]
    assignment: Assignment


@dataclass(frozen=True, slots=True)
class GroupSpec:
    members: Mapping[str, MemberSpec]
    partition_counts: Mapping[str, int]
    """Partitions of every subscribed topic, by topic id."""

    def is_homogeneous(self) -> bool:
        """Every member subscribes to the same topics (Kafka's ``SubscriptionType``)."""
        return len({m.subscribed_topic_ids for m in self.members.values()}) <= 1

    def partitions_of(self, topic_id: str) -> int:
        count = self.partition_counts.get(topic_id)
        if count is None:
            raise PartitionAssignorError(
                f"Members are subscribed to topic {topic_id} which doesn't exist in the "
                "topic metadata."
            )
        return count

    def subscribers(self) -> dict[str, list[str]]:
        """Topic id -> the members subscribing to it, in member order; raises
        PartitionAssignorError for a topic without metadata."""
        found: dict[str, list[str]] = {}
        for member_id in self.member_ids():
            for topic_id in sorted(self.members[member_id].subscribed_topic_ids):
                self.partitions_of(topic_id)
                found.setdefault(topic_id, []).append(member_id)
        return found

    def member_ids(self) -> list[str]:
        """In a fixed order, so that an assignment is reproducible."""
        return sorted(self.members)


class PartitionAssignor(Protocol):
    name: str

    def assign(self, group: GroupSpec) -> dict[str, dict[str, frozenset[int]]]:
        """The target assignment of every member (by topic id); raises
        PartitionAssignorError."""
