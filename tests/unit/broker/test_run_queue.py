"""The run queue the controller stretches sessions by: smoothed, so that one crowded
instant counts little, and remembered for a minute, as a late contact is."""

from __future__ import annotations

import pytest

from kafkalite.broker.run_queue import RunQueue, runnable_tasks

pytestmark = pytest.mark.unit


def test_a_crowd_that_lasts_counts_nearly_whole_and_an_instant_little() -> None:
    queue = RunQueue(cpus=2)
    queue.record(0, 2)  # a quiet machine: one task per CPU
    assert queue.per_cpu(0) == 1
    queue.record(100, 24)  # one crowded instant, a tenth of a second after
    assert 1.5 < queue.per_cpu(100) < 2.5
    quiet = RunQueue(cpus=2)
    quiet.record(0, 2)
    for t in range(1_000, 4_001, 1_000):  # twelve tasks, sampled each second for 4 s
        quiet.record(t, 12)
    assert 5.5 < quiet.per_cpu(4_000) <= 6


def test_the_most_crowded_moment_of_the_last_minute_is_kept() -> None:
    queue = RunQueue(cpus=2)
    for t in range(0, 5_001, 1_000):
        queue.record(t, 12)
    for t in range(6_000, 60_001, 1_000):
        queue.record(t, 2)
    assert queue.per_cpu(60_000) == 6  # the crowd of 5 s ago
    for t in range(61_000, 70_001, 1_000):
        queue.record(t, 2)
    assert queue.per_cpu(70_000) == pytest.approx(1, abs=0.05)  # its decay has left too


def test_this_machine_reports_its_run_queue() -> None:
    """The reader itself is running, so there is at least one task (Linux's
    ``/proc/loadavg``; elsewhere the load average, which may read 0)."""
    runnable = runnable_tasks()
    assert runnable is not None and runnable >= 1
