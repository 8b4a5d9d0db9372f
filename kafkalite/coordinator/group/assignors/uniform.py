"""The ``uniform`` server-side assignor, Kafka 4.0's default (``group.consumer.assignors``'s
first): partitions spread as evenly as possible over the members, each keeping as many of
the partitions it has as that balance allows (balance first, then stickiness).

When every member subscribes to the same topics (homogeneous) it is Kafka's
``UniformHomogeneousAssignmentBuilder``: a quota of partitions per member (the total
divided by the members, one more for the first ones while the remainder lasts), each
member keeps up to its quota of what it has, the rest is handed to members below theirs.
Otherwise (heterogeneous) it follows ``UniformHeterogeneousAssignmentBuilder``'s three
steps: keep what each member has of its topics, give every other partition to the least
loaded of its topic's subscribers, then move partitions from a member to a subscriber
with two or more fewer until none can move. Kafka-Lite's balancing step is the plain
version of Kafka's (which orders its candidate moves for speed); it stops at the same
condition: no partition can go to a member with at least two fewer.
"""

from __future__ import annotations

from kafkalite.coordinator.group.assignors.spec import GroupSpec, PartitionAssignorError

TopicPartition = tuple[str, int]


class UniformAssignor:
    name = "uniform"

    def assign(self, group: GroupSpec) -> dict[str, dict[str, frozenset[int]]]:
        if not group.members:
            return {}
        if group.is_homogeneous():
            return _homogeneous(group)
        return _heterogeneous(group)


def _as_assignment(partitions: set[TopicPartition]) -> dict[str, frozenset[int]]:
    result: dict[str, set[int]] = {}
    for topic_id, p in partitions:
        result.setdefault(topic_id, set()).add(p)
    return {t: frozenset(ps) for t, ps in result.items()}


def _homogeneous(group: GroupSpec) -> dict[str, dict[str, frozenset[int]]]:
    member_ids = group.member_ids()
    topics = group.members[member_ids[0]].subscribed_topic_ids
    everything = [(t, p) for t in sorted(topics) for p in range(group.partitions_of(t))]
    held = {
        (t, p)
        for m in group.members.values()
        for t, parts in m.assignment.items()
        if t in topics
        for p in parts
    }
    unassigned = [tp for tp in everything if tp not in held]
    minimum, extra = divmod(len(everything), len(member_ids))
    kept: dict[str, set[TopicPartition]] = {}
    unfilled: list[tuple[str, int]] = []
    for member_id in member_ids:
        quota = minimum + (1 if extra > 0 else 0)
        extra -= 1
        mine: set[TopicPartition] = set()
        for topic_id, parts in sorted(group.members[member_id].assignment.items()):
            if topic_id not in topics:
                continue  # no longer subscribed: dropped
            for p in sorted(parts):
                if len(mine) < quota:
                    mine.add((topic_id, p))
                else:
                    unassigned.append((topic_id, p))  # above its quota: handed on
        kept[member_id] = mine
        if len(mine) < quota:
            unfilled.append((member_id, quota - len(mine)))
    position = 0
    for member_id, missing in unfilled:
        kept[member_id].update(unassigned[position : position + missing])
        position += missing
    if position < len(unassigned):
        raise PartitionAssignorError("Partitions were left unassigned")
    return {m: _as_assignment(kept[m]) for m in member_ids}


def _heterogeneous(group: GroupSpec) -> dict[str, dict[str, frozenset[int]]]:
    member_ids = group.member_ids()
    subscribers = group.subscribers()
    owner = _sticky(group)  # 1. keep what each member has of its topics
    load = dict.fromkeys(member_ids, 0)
    for member_id in owner.values():
        load[member_id] += 1

    def order(tp: TopicPartition) -> tuple[float, int, str, int]:
        topic_id, p = tp
        count = len(subscribers[topic_id])
        return (-group.partitions_of(topic_id) / count, count, topic_id, p)

    everything = [(t, p) for t in subscribers for p in range(group.partitions_of(t))]
    for tp in sorted((tp for tp in everything if tp not in owner), key=order):
        # 2. each partition nobody kept to the least loaded of its topic's subscribers
        chosen = min(subscribers[tp[0]], key=lambda m: (load[m], m))
        owner[tp] = chosen
        load[chosen] += 1
    _balance(owner, load, subscribers)  # 3.
    result: dict[str, set[TopicPartition]] = {m: set() for m in member_ids}
    for tp, member_id in owner.items():
        result[member_id].add(tp)
    return {m: _as_assignment(result[m]) for m in member_ids}


def _sticky(group: GroupSpec) -> dict[TopicPartition, str]:
    """The partitions each member keeps: those of its target it still subscribes to."""
    owner: dict[TopicPartition, str] = {}
    for member_id in group.member_ids():
        spec = group.members[member_id]
        for topic_id, parts in spec.assignment.items():
            if topic_id not in spec.subscribed_topic_ids:
                continue
            for p in parts:
                if p < group.partitions_of(topic_id):
                    owner.setdefault((topic_id, p), member_id)
    return owner


def _balance(
    owner: dict[TopicPartition, str], load: dict[str, int], subscribers: dict[str, list[str]]
) -> None:
    """Move a partition to a subscriber of its topic with at least two fewer, while one
    can move: each move lowers the sum of the squared loads, so this ends."""
    moved = True
    while moved:
        moved = False
        for tp in sorted(owner, key=lambda tp: (-load[owner[tp]], tp)):
            target = min(subscribers[tp[0]], key=lambda m: (load[m], m))
            if load[target] + 1 < load[owner[tp]]:
                load[owner[tp]] -= 1
                load[target] += 1
                owner[tp] = target
                moved = True
                break
