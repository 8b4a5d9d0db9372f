"""The groups a coordinator holds, as ``/state`` shows them: each group's protocol, state,
epoch and members, with what each member reads (and, in a consumer group, its own epoch,
its reconciliation state, what it is giving up, what it waits for another member to give
up, and its target), so ``kafkalite status`` and the dashboard can show a rebalance as it
happens."""

from __future__ import annotations

from typing import Any

from kafkalite.coordinator.group.consumer_member import (
    Assignment,
    ConsumerGroupMember,
    MemberState,
)
from kafkalite.coordinator.group.consumer_protocol import assigned_partitions
from kafkalite.coordinator.group.coordinator import GroupCoordinator
from kafkalite.coordinator.partitioning import partition_for


def group_views(coordinator: GroupCoordinator, broker_id: int) -> list[dict[str, Any]]:
    """Every group this broker coordinates now (classic ones that only hold offsets left
    out), sorted by id; ``coordinator_epoch`` tells a stale coordinator's copy apart."""
    manager = coordinator.manager
    count = manager.offsets.partition_count()
    consumer = coordinator.consumer

    def where(group_id: str) -> dict[str, Any]:
        epoch = manager.loads.loaded_epoch(partition_for(group_id, count))
        return {"coordinator": broker_id, "coordinator_epoch": epoch}

    views = [
        {
            "group": g.group_id,
            "protocol": "classic",
            "state": g.state.value,
            "epoch": g.generation_id,
            "assignor": g.protocol_name,
            **where(g.group_id),
            "members": [
                {
                    "member_id": m.member_id,
                    "client_id": m.client_id,
                    "instance_id": m.group_instance_id,
                    "member_protocol": "classic",
                    "member_epoch": g.generation_id,
                    "state": None,
                    "assigned": [f"{t}-{p}" for t, p in assigned_partitions(m.assignment)],
                    "revoking": [],
                    "waiting": [],
                    "target": None,
                }
                for m in g.members.values()
            ],
        }
        for g in manager.list_groups()
        if g.members or g.generation_id > 0
    ]
    views += [
        {
            "group": g.group_id,
            "protocol": "consumer",
            "state": g.state.value,
            "epoch": g.group_epoch,
            "assignment_epoch": g.assignment_epoch,
            "assignor": consumer.assignor_of(g),
            **where(g.group_id),
            "members": [
                {
                    "member_id": m.member_id,
                    "client_id": m.client_id,
                    "instance_id": m.instance_id,
                    "member_protocol": "classic" if m.uses_classic_protocol else "consumer",
                    "member_epoch": m.member_epoch,
                    "state": m.state.value,
                    "assigned": consumer.partition_names(m.assigned_partitions),
                    "revoking": consumer.partition_names(m.partitions_pending_revocation),
                    "waiting": consumer.partition_names(_waiting_for(m, g.target_of(m.member_id))),
                    "target": consumer.partition_names(g.target_of(m.member_id)),
                }
                for m in g.members.values()
            ],
        }
        for g in manager.consumer_groups.values()
    ]
    return sorted(views, key=lambda v: v["group"])


def _waiting_for(member: ConsumerGroupMember, target: Assignment) -> dict[str, frozenset[int]]:
    """The partitions of its target a member waits for another member to give up."""
    if member.state != MemberState.UNRELEASED_PARTITIONS:
        return {}
    held = member.assigned_partitions
    return {
        t: ps - held.get(t, frozenset())
        for t, ps in target.items()
        if ps - held.get(t, frozenset())
    }
