"""The server-side assignors of KIP-848 groups, driven directly: balance first, then
stickiness, as Kafka's uniform and range assignors promise."""

from __future__ import annotations

import pytest

from kafkalite.coordinator.group.assignors.range import RangeAssignor
from kafkalite.coordinator.group.assignors.spec import (
    GroupSpec,
    MemberSpec,
    PartitionAssignorError,
)
from kafkalite.coordinator.group.assignors.uniform import UniformAssignor

pytestmark = pytest.mark.unit


def spec(
    members: dict[str, tuple[set[str], dict[str, set[int]]]], counts: dict[str, int]
) -> GroupSpec:
    return GroupSpec(
        {
            m: MemberSpec(frozenset(topics), {t: frozenset(ps) for t, ps in current.items()})
            for m, (topics, current) in members.items()
        },
        counts,
    )


def sizes(result: dict[str, dict[str, frozenset[int]]]) -> dict[str, int]:
    return {m: sum(len(ps) for ps in a.values()) for m, a in result.items()}


def every_partition_once(result: dict[str, dict[str, frozenset[int]]], counts: dict[str, int]):
    owned = [(t, p) for a in result.values() for t, ps in a.items() for p in ps]
    assert sorted(owned) == sorted((t, p) for t, n in counts.items() for p in range(n))


def test_uniform_spreads_a_new_group_evenly() -> None:
    counts = {"A": 4, "B": 3}
    group = spec({m: ({"A", "B"}, {}) for m in ("m1", "m2", "m3")}, counts)
    result = UniformAssignor().assign(group)
    every_partition_once(result, counts)
    assert sorted(sizes(result).values()) == [2, 2, 3]


def test_uniform_moves_only_what_a_new_member_needs() -> None:
    """Two members with 3 partitions each; a third joins: each gives up exactly one."""
    counts = {"A": 6}
    before = {"m1": {"A": {0, 1, 2}}, "m2": {"A": {3, 4, 5}}}
    group = spec(
        {"m1": ({"A"}, before["m1"]), "m2": ({"A"}, before["m2"]), "m3": ({"A"}, {})}, counts
    )
    result = UniformAssignor().assign(group)
    every_partition_once(result, counts)
    assert sizes(result) == {"m1": 2, "m2": 2, "m3": 2}
    assert result["m1"]["A"] < frozenset(before["m1"]["A"])
    assert result["m2"]["A"] < frozenset(before["m2"]["A"])


def test_uniform_gives_a_leavers_partitions_to_the_others_and_keeps_the_rest() -> None:
    counts = {"A": 6}
    group = spec({"m1": ({"A"}, {"A": {0, 1}}), "m2": ({"A"}, {"A": {2, 3}})}, counts)
    result = UniformAssignor().assign(group)
    every_partition_once(result, counts)
    assert result["m1"]["A"] >= {0, 1} and result["m2"]["A"] >= {2, 3}


def test_uniform_heterogeneous_balances_within_each_topics_subscribers() -> None:
    """m1 reads A and B, m2 only B: m2 cannot take A, so B goes to m2 to even the load."""
    counts = {"A": 3, "B": 3}
    group = spec({"m1": ({"A", "B"}, {}), "m2": ({"B"}, {})}, counts)
    result = UniformAssignor().assign(group)
    every_partition_once(result, counts)
    assert result["m1"]["A"] == {0, 1, 2}
    assert "A" not in result["m2"]
    assert sizes(result) == {"m1": 3, "m2": 3}


def test_uniform_heterogeneous_moves_partitions_until_balanced() -> None:
    counts = {"A": 4}
    group = spec({"m1": ({"A"}, {"A": {0, 1, 2, 3}}), "m2": ({"A", "B"}, {})}, {**counts, "B": 0})
    result = UniformAssignor().assign(group)
    assert sizes(result) == {"m1": 2, "m2": 2}
    assert result["m1"]["A"] < {0, 1, 2, 3}


def test_a_topic_without_metadata_cannot_be_assigned() -> None:
    with pytest.raises(PartitionAssignorError):
        RangeAssignor().assign(spec({"m1": ({"gone"}, {})}, {}))


def test_range_gives_contiguous_ranges_of_co_partitioned_topics() -> None:
    counts = {"A": 4, "B": 4}
    group = spec({m: ({"A", "B"}, {}) for m in ("m1", "m2")}, counts)
    result = RangeAssignor().assign(group)
    assert result == {
        "m1": {"A": frozenset({0, 1}), "B": frozenset({0, 1})},
        "m2": {"A": frozenset({2, 3}), "B": frozenset({2, 3})},
    }


def test_range_keeps_what_it_can_when_a_member_joins() -> None:
    counts = {"A": 5}
    group = spec(
        {"m1": ({"A"}, {"A": {0, 1, 2}}), "m2": ({"A"}, {"A": {3, 4}}), "m3": ({"A"}, {})},
        counts,
    )
    result = RangeAssignor().assign(group)
    every_partition_once(result, counts)
    assert result["m1"]["A"] <= {0, 1, 2} and result["m2"]["A"] <= {3, 4}
    assert sorted(sizes(result).values()) == [1, 2, 2]
