"""A consumer group's next target assignment (Kafka's ``TargetAssignmentBuilder``).

When the group epoch moves past the assignment epoch, the group's server-side assignor is
run once over every member's subscription, starting from the current target assignment
(so that a sticky assignor keeps what it can). Only the members whose target changed get a
new ``consumer_group_target_assignment_member`` record, then the new assignment epoch is
written. Members learn of their new target on their own next heartbeat.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kafkalite.coordinator.group.assignors.spec import (
    GroupSpec,
    MemberSpec,
    PartitionAssignor,
    PartitionAssignorError,
)
from kafkalite.coordinator.group.consumer_group import ConsumerGroup, TopicMetadata
from kafkalite.coordinator.group.consumer_group_records import (
    GroupRecord,
    target_epoch_record,
    target_member_record,
)
from kafkalite.coordinator.group.consumer_member import Assignment, ConsumerGroupMember
from kafkalite.protocol.errors import ErrorCode, KafkaError


@dataclass(frozen=True, slots=True)
class TargetAssignment:
    members: dict[str, Assignment]
    records: list[GroupRecord]


def build_target_assignment(
    group: ConsumerGroup,
    group_epoch: int,
    assignor: PartitionAssignor,
    members: Mapping[str, ConsumerGroupMember],
    subscribed_topics: Callable[[ConsumerGroupMember], set[str]],
    subscription_metadata: Mapping[str, TopicMetadata],
) -> TargetAssignment:
    """The target assignment of ``members`` (the group's members after this change) at
    ``group_epoch``. ``subscribed_topics`` gives a member's topic names (its regex
    resolved); topics without metadata (not created yet) get no partitions."""
    specs = {
        member_id: MemberSpec(
            frozenset(
                subscription_metadata[name].topic_id
                for name in subscribed_topics(member)
                if name in subscription_metadata
            ),
            group.target_of(member_id, member.instance_id),
        )
        for member_id, member in members.items()
    }
    counts = {t.topic_id: t.partitions for t in subscription_metadata.values()}
    try:
        targets = assignor.assign(GroupSpec(specs, counts))
    except PartitionAssignorError as exc:
        message = f"Failed to compute a new target assignment for epoch {group_epoch}: {exc}"
        raise KafkaError(ErrorCode.unknown_server_error, message) from exc
    records = [
        target_member_record(group.group_id, member_id, target)
        for member_id, target in sorted(targets.items())
        if group.target_assignment.get(member_id) != target
    ]
    records.append(target_epoch_record(group.group_id, group_epoch))
    return TargetAssignment(dict(targets), records)
