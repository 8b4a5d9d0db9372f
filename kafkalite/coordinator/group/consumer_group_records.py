"""What a consumer group (KIP-848) writes to ``__consumer_offsets``, and how replaying it
rebuilds the group.

Kafka's record types, under the same names, as JSON (like the classic group's records in
``offsets_log``), so a student can read the topic and follow a rebalance step by step::

    consumer_group_metadata                 {group}          {"epoch"}
    consumer_group_partition_metadata       {group}          {"topics": {name: {"topic_id",
                                                               "partitions"}}}
    consumer_group_member_metadata          {group, member}  what the member asked for
                                                             (a classic member: also its
                                                             session and JoinGroup protocols)
    consumer_group_target_assignment_metadata {group}        {"assignment_epoch"}
    consumer_group_target_assignment_member {group, member}  {"partitions": {topic id: [..]}}
    consumer_group_current_member_assignment {group, member} {"member_epoch",
                                                               "previous_member_epoch",
                                                               "state", "assigned_partitions",
                                                               "partitions_pending_revocation"}

A null value deletes (a member's three records when it leaves, the group's when it is
deleted). The coordinator's memory of a group is only ever changed by replaying these, in
the order written: when it handles a heartbeat, when it loads a partition after a failover.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from kafkalite.coordinator.group.consumer_group import ConsumerGroup, TopicMetadata
from kafkalite.coordinator.group.consumer_member import (
    Assignment,
    ClassicMemberMetadata,
    ConsumerGroupMember,
    MemberState,
    assignment,
)

GroupRecord = tuple[dict[str, Any], dict[str, Any] | None]
"""One record: its key and value (None: a tombstone)."""

GROUP_METADATA = "consumer_group_metadata"
PARTITION_METADATA = "consumer_group_partition_metadata"
MEMBER_METADATA = "consumer_group_member_metadata"
TARGET_ASSIGNMENT_METADATA = "consumer_group_target_assignment_metadata"
TARGET_ASSIGNMENT_MEMBER = "consumer_group_target_assignment_member"
CURRENT_MEMBER_ASSIGNMENT = "consumer_group_current_member_assignment"
RECORD_TYPES = frozenset(
    {
        GROUP_METADATA,
        PARTITION_METADATA,
        MEMBER_METADATA,
        TARGET_ASSIGNMENT_METADATA,
        TARGET_ASSIGNMENT_MEMBER,
        CURRENT_MEMBER_ASSIGNMENT,
    }
)


def _key(kind: str, group_id: str, member_id: str | None = None) -> dict[str, Any]:
    key: dict[str, Any] = {"type": kind, "group": group_id}
    if member_id is not None:
        key["member"] = member_id
    return key


def _partitions(partitions: Assignment) -> dict[str, list[int]]:
    return {topic_id: sorted(ps) for topic_id, ps in sorted(partitions.items())}


def _assignment(value: Mapping[str, Any]) -> dict[str, frozenset[int]]:
    return assignment((str(t), [int(p) for p in ps]) for t, ps in value.items())


def group_epoch_record(group_id: str, epoch: int) -> GroupRecord:
    return _key(GROUP_METADATA, group_id), {"epoch": epoch}


def subscription_metadata_record(group_id: str, topics: Mapping[str, TopicMetadata]) -> GroupRecord:
    value = {
        name: {"topic_id": t.topic_id, "partitions": t.partitions}
        for name, t in sorted(topics.items())
    }
    return _key(PARTITION_METADATA, group_id), {"topics": value}


def member_metadata_record(group_id: str, member: ConsumerGroupMember) -> GroupRecord:
    return _key(MEMBER_METADATA, group_id, member.member_id), {
        "instance_id": member.instance_id,
        "rack_id": member.rack_id,
        "client_id": member.client_id,
        "client_host": member.client_host,
        "subscribed_topic_names": list(member.subscribed_topic_names),
        "subscribed_topic_regex": member.subscribed_topic_regex,
        "server_assignor": member.server_assignor,
        "rebalance_timeout_ms": member.rebalance_timeout_ms,
        "classic_member_metadata": None
        if member.classic is None
        else {
            "session_timeout_ms": member.classic.session_timeout_ms,
            "supported_protocols": [
                {"name": name, "metadata": base64.b64encode(metadata).decode()}
                for name, metadata in member.classic.protocols
            ],
        },
    }


def target_epoch_record(group_id: str, epoch: int) -> GroupRecord:
    return _key(TARGET_ASSIGNMENT_METADATA, group_id), {"assignment_epoch": epoch}


def target_member_record(group_id: str, member_id: str, partitions: Assignment) -> GroupRecord:
    return _key(TARGET_ASSIGNMENT_MEMBER, group_id, member_id), {
        "partitions": _partitions(partitions)
    }


def current_assignment_record(group_id: str, member: ConsumerGroupMember) -> GroupRecord:
    return _key(CURRENT_MEMBER_ASSIGNMENT, group_id, member.member_id), {
        "member_epoch": member.member_epoch,
        "previous_member_epoch": member.previous_member_epoch,
        "state": member.state.value,
        "assigned_partitions": _partitions(member.assigned_partitions),
        "partitions_pending_revocation": _partitions(member.partitions_pending_revocation),
    }


def member_tombstones(group_id: str, member_id: str) -> list[GroupRecord]:
    """A member leaves: its assignment, its target, then itself (Kafka's order)."""
    return [
        (_key(CURRENT_MEMBER_ASSIGNMENT, group_id, member_id), None),
        (_key(TARGET_ASSIGNMENT_MEMBER, group_id, member_id), None),
        (_key(MEMBER_METADATA, group_id, member_id), None),
    ]


def group_tombstones(group_id: str) -> list[GroupRecord]:
    """An empty group is deleted (or becomes a classic group)."""
    return [
        (_key(TARGET_ASSIGNMENT_METADATA, group_id), None),
        (_key(PARTITION_METADATA, group_id), None),
        (_key(GROUP_METADATA, group_id), None),
    ]


def replay(
    groups: dict[str, ConsumerGroup], key: Mapping[str, Any], value: Mapping[str, Any] | None
) -> None:
    """Apply one record to ``groups`` (Kafka's ``GroupMetadataManager.replay``)."""
    group_id, kind = str(key["group"]), key["type"]
    if kind == GROUP_METADATA and value is None:
        groups.pop(group_id, None)
        return
    group = groups.get(group_id)
    if group is None:
        if value is None:
            return  # a tombstone of a group already gone
        group = groups[group_id] = ConsumerGroup(group_id)
    member_id = str(key.get("member"))
    if kind == GROUP_METADATA and value is not None:
        group.group_epoch = int(value["epoch"])
    elif kind == PARTITION_METADATA:
        topics = {} if value is None else value["topics"]
        group.subscription_metadata = {
            name: TopicMetadata(str(t["topic_id"]), name, int(t["partitions"]))
            for name, t in topics.items()
        }
    elif kind == TARGET_ASSIGNMENT_METADATA:
        group.assignment_epoch = 0 if value is None else int(value["assignment_epoch"])
    elif kind == TARGET_ASSIGNMENT_MEMBER:
        if value is None:
            group.target_assignment.pop(member_id, None)
        else:
            group.target_assignment[member_id] = _assignment(value["partitions"])
    elif kind == MEMBER_METADATA:
        _replay_member_metadata(group, member_id, value)
    elif kind == CURRENT_MEMBER_ASSIGNMENT:
        _replay_current_assignment(group, member_id, value)


def _replay_member_metadata(
    group: ConsumerGroup, member_id: str, value: Mapping[str, Any] | None
) -> None:
    if value is None:
        group.remove_member(member_id)
        return
    member = group.members.get(member_id) or ConsumerGroupMember(member_id)
    group.update_member(
        replace(
            member,
            instance_id=value.get("instance_id"),
            rack_id=value.get("rack_id"),
            client_id=str(value.get("client_id", "")),
            client_host=str(value.get("client_host", "")),
            subscribed_topic_names=tuple(value.get("subscribed_topic_names", ())),
            subscribed_topic_regex=str(value.get("subscribed_topic_regex") or ""),
            server_assignor=value.get("server_assignor"),
            rebalance_timeout_ms=int(value.get("rebalance_timeout_ms", -1)),
            classic=_classic_metadata(value.get("classic_member_metadata")),
        )
    )


def _classic_metadata(value: Mapping[str, Any] | None) -> ClassicMemberMetadata | None:
    if value is None:
        return None
    return ClassicMemberMetadata(
        int(value["session_timeout_ms"]),
        tuple(
            (str(p["name"]), base64.b64decode(p["metadata"])) for p in value["supported_protocols"]
        ),
    )


def _replay_current_assignment(
    group: ConsumerGroup, member_id: str, value: Mapping[str, Any] | None
) -> None:
    member = group.members.get(member_id) or ConsumerGroupMember(member_id)
    if value is None:  # it leaves: it holds nothing from now on
        if member_id not in group.members:
            return
        group.update_member(
            replace(
                member,
                member_epoch=-1,
                previous_member_epoch=-1,
                state=MemberState.STABLE,
                assigned_partitions={},
                partitions_pending_revocation={},
            )
        )
        return
    group.update_member(
        replace(
            member,
            member_epoch=int(value["member_epoch"]),
            previous_member_epoch=int(value["previous_member_epoch"]),
            state=MemberState(value["state"]),
            assigned_partitions=_assignment(value["assigned_partitions"]),
            partitions_pending_revocation=_assignment(value["partitions_pending_revocation"]),
        )
    )
