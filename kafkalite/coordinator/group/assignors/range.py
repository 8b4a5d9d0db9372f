"""The ``range`` server-side assignor (Kafka's ``RangeAssignor`` for consumer groups):
per topic, each subscriber gets a contiguous range of partitions, the same partition
numbers of co-partitioned topics going to the same member so that they can be joined;
within that rule, a member keeps the partitions it has (sticky).

Per topic: a quota of partitions per subscriber (partitions / subscribers; the remainder
gives one more to as many members), each member keeps the lowest of its partitions up to
the quota (one more if it had more and extras are left), and the partitions nobody kept go,
in order, to the members still below their quota.
"""

from __future__ import annotations

from kafkalite.coordinator.group.assignors.spec import GroupSpec


class RangeAssignor:
    name = "range"

    def assign(self, group: GroupSpec) -> dict[str, dict[str, frozenset[int]]]:
        member_ids = group.member_ids()
        subscribers = group.subscribers()
        result: dict[str, dict[str, frozenset[int]]] = {m: {} for m in member_ids}
        for topic_id, members in sorted(subscribers.items()):
            for member_id, partitions in _assign_topic(group, topic_id, members).items():
                if partitions:
                    result[member_id][topic_id] = frozenset(partitions)
        return result


def _assign_topic(group: GroupSpec, topic_id: str, members: list[str]) -> dict[str, list[int]]:
    count = group.partitions_of(topic_id)
    quota, extra = divmod(count, len(members))
    assigned: dict[str, list[int]] = {m: [] for m in members}
    sticky: set[int] = set()
    unfilled: list[tuple[str, int]] = []
    for member_id in members:
        current = sorted(group.members[member_id].assignment.get(topic_id, frozenset()))
        current = [p for p in current if p < count]
        retained = current[:quota]
        remaining = quota - len(current)
        if remaining < 0 and extra > 0:
            extra -= 1
            retained.append(current[quota])  # it had more: it keeps one extra
        else:
            unfilled.append((member_id, remaining))
        assigned[member_id].extend(retained)
        sticky.update(retained)
    unassigned = [p for p in range(count) if p not in sticky]
    position = 0
    for member_id, below_quota in unfilled:
        missing = below_quota + (1 if extra > 0 else 0)
        extra -= 1 if extra > 0 else 0
        if missing > 0:
            assigned[member_id].extend(unassigned[position : position + missing])
            position += missing
    return assigned
