"""Offset math of the Spark source: ranges, read limits, splitting and named data loss."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.spark.offsets import (
    EARLIEST,
    LATEST,
    TASK_RECORDS,
    OffsetRange,
    clamp_to_log,
    from_json,
    next_end,
    plan_ranges,
    rate_limit,
    split_ranges,
    task_ranges,
    to_json,
)

pytestmark = pytest.mark.unit

A0, A1, B0 = ("a", 0), ("a", 1), ("b", 0)


def test_json_is_sparks_shape_and_round_trips() -> None:
    offsets = {A1: 7, A0: 3, B0: 0}
    assert to_json(offsets) == {"a": {"0": 3, "1": 7}, "b": {"0": 0}}
    assert from_json(to_json(offsets)) == offsets


def test_clamp_resolves_sentinels_and_names_offsets_outside_the_log() -> None:
    earliest, latest = {A0: 10, A1: 0, B0: 5}, {A0: 20, A1: 4, B0: 9}
    resolved, losses = clamp_to_log({A0: EARLIEST, A1: LATEST, B0: 7}, earliest, latest)
    assert resolved == {A0: 10, A1: 4, B0: 7} and losses == []
    resolved, losses = clamp_to_log({A0: 3, A1: 9}, earliest, latest)
    assert resolved == {A0: 10, A1: 4}
    assert losses == [
        "a-0: offset 3 is before the log start 10",
        "a-1: offset 9 is after the log end 4",
    ]


def test_next_end_adds_new_partitions_and_names_vanished_or_shrunk_ones() -> None:
    end, losses = next_end({A0: 5, B0: 3}, {A0: 9, A1: 2, B0: 3})
    assert end == {A0: 9, A1: 2, B0: 3} and losses == []
    assert plan_ranges({A0: 5, B0: 3}, end) == [
        OffsetRange("a", 0, 5, 9),
        OffsetRange("a", 1, 0, 2),
    ]
    end, losses = next_end({A0: 5, B0: 3}, {A0: 2})
    assert end == {A0: 2}
    assert len(losses) == 2 and "b-0 is gone" in losses[0] and "went back from 5 to 2" in losses[1]
    assert plan_ranges({A0: 5}, end) == []  # the lost range is not read; reading goes on at 2


def test_rate_limit_shares_the_limit_by_backlog_and_never_exceeds_it() -> None:
    start, end = {A0: 0, A1: 100, B0: 0}, {A0: 300, A1: 200, B0: 0}
    assert rate_limit(start, end, 1000) == end  # under the limit: everything
    limited = rate_limit(start, end, 40)
    assert limited == {A0: 30, A1: 110, B0: 0}
    assert rate_limit({A0: 0}, {A0: 5, A1: 5}, 3) in ({A0: 2, A1: 1}, {A0: 1, A1: 2})


@given(
    st.dictionaries(
        st.tuples(st.sampled_from("xyz"), st.integers(0, 3)),
        st.tuples(st.integers(0, 1000), st.integers(0, 1000)),
        max_size=8,
    ),
    st.integers(1, 3000),
)
def test_rate_limit_properties(spans, limit) -> None:
    start = {tp: min(a, b) for tp, (a, b) in spans.items()}
    end = {tp: max(a, b) for tp, (a, b) in spans.items()}
    limited = rate_limit(start, end, limit)
    taken = sum(limited[tp] - start[tp] for tp in end)
    assert taken == min(limit, sum(end[tp] - start[tp] for tp in end))
    assert all(start[tp] <= limited[tp] <= end[tp] for tp in end)


def test_split_ranges_for_min_partitions() -> None:
    ranges = [OffsetRange("a", 0, 0, 90), OffsetRange("a", 1, 0, 10)]
    assert split_ranges(ranges, None) == ranges
    assert split_ranges(ranges, 2) == ranges
    pieces = split_ranges(ranges, 10)
    assert [(r.partition, r.start, r.end) for r in pieces] == [
        (0, 0, 10), (0, 10, 20), (0, 20, 30), (0, 30, 40), (0, 40, 50),
        (0, 50, 60), (0, 60, 70), (0, 70, 80), (0, 80, 90), (1, 0, 10),
    ]  # fmt: skip
    assert split_ranges([OffsetRange("a", 0, 5, 7)], 10) == [
        OffsetRange("a", 0, 5, 6),
        OffsetRange("a", 0, 6, 7),
    ]  # never an empty piece


def test_small_ranges_are_packed_into_one_task_and_big_ones_keep_their_own() -> None:
    small = [OffsetRange("a", p, 0, 300) for p in range(3)]
    assert task_ranges(small, None) == [small]  # a lab's micro-batch: one task
    big, after = OffsetRange("a", 0, 0, TASK_RECORDS + 1), OffsetRange("b", 0, 5, 9)
    assert task_ranges([big, *small, after], None) == [[big], [*small, after]]
    halves = [OffsetRange("a", p, 0, TASK_RECORDS // 2) for p in range(3)]
    assert task_ranges(halves, None) == [halves[:2], halves[2:]]
    assert task_ranges([], None) == []
    # minPartitions keeps Spark's behaviour: a task per range, big ones cut
    assert task_ranges(small, 6) == [[r] for r in split_ranges(small, 6)]


@given(st.lists(st.integers(1, 3 * TASK_RECORDS), max_size=12))
def test_packed_tasks_read_every_range_once_in_order_within_the_bound(sizes: list[int]) -> None:
    ranges = [OffsetRange("t", p, 10, 10 + size) for p, size in enumerate(sizes)]
    tasks = task_ranges(ranges, None)
    assert [r for task in tasks for r in task] == ranges
    assert all(len(t) == 1 or sum(r.size for r in t) <= TASK_RECORDS for t in tasks)
    assert task_ranges(ranges, None) == tasks  # a replayed batch gets the same tasks
