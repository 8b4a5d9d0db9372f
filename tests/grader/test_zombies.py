"""A transaction a killed instance left open on an output is blamed on its restart only
if no producer of its transactional.id ended it: still open, or ended by the broker's
timeout and never taken over afterwards. The events are the coordinator's, as a lab 09
trial produces them (kill right after a transactional write, then a restart)."""

from __future__ import annotations

from typing import Any

import pytest

from grader.zombies import LeftOpen, left_open, settled

pytestmark = [pytest.mark.grader, pytest.mark.unit]

COPY = "copy-0bb694-2"
OLD = "kafkalite-spark-65876165-0"
NEW = "kafkalite-spark-f365834d-0"
TIMED_OUT = "aborted by the broker's transaction timeout"


def event(kind: str, txn_id: str, *partitions: str) -> dict[str, Any]:
    found: dict[str, Any] = {"type": kind, "transactional_id": txn_id}
    if partitions:
        found["partitions"] = list(partitions)
    return found


def transaction(txn_id: str, state: str, *partitions: str) -> dict[str, Any]:
    return {"transactional_id": txn_id, "state": state, "partitions": list(partitions)}


KILLED = [event("txn_started", OLD, "__consumer_offsets-7")]
TIMEOUT = [
    event("txn_timed_out", OLD),
    event("txn_prepare_abort", OLD, "__consumer_offsets-7", f"{COPY}-0", f"{COPY}-1"),
    event("markers_written", OLD, "__consumer_offsets-7", f"{COPY}-0", f"{COPY}-1"),
]
FENCE = [
    event("producer_fenced", OLD),
    event("txn_prepare_abort", OLD, "__consumer_offsets-7", f"{COPY}-0"),
]
NEW_COMMIT = [
    event("txn_started", NEW, "__consumer_offsets-2"),
    event("txn_prepare_commit", NEW, "__consumer_offsets-2", f"{COPY}-0", f"{COPY}-1"),
]


def test_a_restart_without_the_transactional_id_leaves_it_to_the_timeout() -> None:
    after = [transaction(OLD, "CompleteAbort"), transaction(NEW, "CompleteCommit")]
    assert left_open(COPY, after, KILLED + NEW_COMMIT + TIMEOUT) == [LeftOpen(OLD, TIMED_OUT)]


def test_one_still_open_after_the_restart_is_named() -> None:
    now = [transaction(OLD, "Ongoing", f"{COPY}-0"), transaction(NEW, "CompleteCommit")]
    assert left_open(COPY, now, KILLED + NEW_COMMIT) == [LeftOpen(OLD, "still open")]


def test_a_restart_that_fences_the_killed_producer_is_not_blamed() -> None:
    after = [transaction(OLD, "CompleteCommit")]
    assert left_open(COPY, after, KILLED + FENCE) == []


def test_a_slow_restart_that_takes_over_after_the_timeout_is_not_blamed() -> None:
    """A restart whose first transaction comes after the killed one timed out (two JVM
    starts on a loaded machine) still fences its id: the timeout is not its doing."""
    after = [transaction(OLD, "CompleteCommit")]
    assert left_open(COPY, after, KILLED + TIMEOUT + FENCE[:1]) == []
    taken_over_before_the_abort = [TIMEOUT[0], FENCE[0], *TIMEOUT[1:]]
    assert left_open(COPY, after, KILLED + taken_over_before_the_abort) == []


def test_other_topics_and_a_fence_before_the_timeout_do_not_count() -> None:
    other = [transaction(OLD, "Ongoing", "copy-0bb694-1-0")]
    assert left_open(COPY, other, KILLED + TIMEOUT) == [LeftOpen(OLD, TIMED_OUT)]
    assert left_open("copy-0bb694-1", [], KILLED + TIMEOUT) == []
    fenced_then_timed_out = FENCE[:1] + TIMEOUT
    assert left_open(COPY, [], fenced_then_timed_out) == [LeftOpen(OLD, TIMED_OUT)]


def test_a_decided_transaction_is_settled_only_once_its_markers_are_written() -> None:
    assert not settled(COPY, [transaction(NEW, "PrepareCommit", f"{COPY}-1")])
    assert settled(COPY, [transaction(NEW, "CompleteCommit")])
    assert settled(COPY, [transaction(NEW, "PrepareCommit", "copy-0bb694-1-0")])
    assert settled(COPY, [transaction(OLD, "Ongoing", f"{COPY}-0")])
