"""The quorum's clock does not count the process's own stalls (``raft.clock``)."""

from __future__ import annotations

import pytest

from kafkalite.raft.clock import ResponsiveClock

pytestmark = pytest.mark.unit


class FakeTime:
    def __init__(self) -> None:
        self.ms = 1_000

    def __call__(self) -> int:
        return self.ms


def test_a_stall_past_the_expected_wake_up_is_not_counted() -> None:
    real = FakeTime()
    clock = ResponsiveClock(real, tolerance_ms=50)
    clock.expect(1_100)  # sleeping until a timer 100 ms away
    real.ms = 3_100  # ... but the process could not run for two seconds
    assert clock.now() == 1_150  # the expected wake-up plus the tolerance
    assert (clock.stalls, clock.stalled_ms) == (1, 1_950)
    real.ms = 3_200
    assert clock.now() == 1_250  # from then on, time runs as usual


def test_waking_on_time_or_early_counts_every_millisecond() -> None:
    real = FakeTime()
    clock = ResponsiveClock(real, tolerance_ms=50)
    clock.expect(1_100)
    real.ms = 1_040  # a message woke it early
    assert clock.now() == 1_040
    clock.expect(1_100)
    real.ms = 1_140  # late, but within the tolerance
    assert clock.now() == 1_140
    real.ms = 5_000  # not sleeping: nothing was expected, nothing is discounted
    assert clock.now() == 5_000
    assert clock.stalls == 0


def test_the_clock_never_runs_backwards() -> None:
    real = FakeTime()
    clock = ResponsiveClock(real, tolerance_ms=0)
    assert clock.now() == 1_000
    clock.expect(500)  # an expectation already in the past
    real.ms = 1_010
    assert clock.now() == 1_000


def test_a_reading_before_the_expected_wake_up_leaves_the_stall_to_be_found() -> None:
    """A message handled while the owner sleeps reads the clock early; a stall after it is
    still discounted at the first reading past the expected wake-up (the controller judges
    brokers' silence on this clock: its own stall must count against none of them)."""
    real = FakeTime()
    clock = ResponsiveClock(real, tolerance_ms=50)
    clock.expect(1_500)
    real.ms = 1_010
    assert clock.now() == 1_010  # a heartbeat arrived
    real.ms = 4_000  # then the process could not run
    assert clock.now() == 1_550
    assert (clock.stalls, clock.stalled_ms) == (1, 2_450)
