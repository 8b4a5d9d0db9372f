"""The windowed maximum behind ``loop_lag_ms``: the largest recent value is reported until
it leaves the window."""

from __future__ import annotations

import pytest

from kafkalite.windowed_max import WindowedMax

pytestmark = pytest.mark.unit


def test_the_largest_recent_value_is_reported_until_it_leaves_the_window() -> None:
    window = WindowedMax(window_ms=5_000)
    assert window.largest(0) == 0
    window.record(1_000, 30)
    window.record(2_000, 1_800)  # a burst of client work
    window.record(3_000, 12)
    assert window.largest(3_000) == 1_800
    assert window.largest(6_999) == 1_800
    assert window.largest(7_001) == 12
    assert window.largest(8_001) == 0


def test_a_smaller_value_after_a_larger_one_shows_once_the_larger_expires() -> None:
    window = WindowedMax(window_ms=1_000)
    for t, lag in [(0, 50), (100, 400), (200, 300), (300, 100)]:
        window.record(t, lag)
    assert [window.largest(t) for t in (300, 1_101, 1_201, 1_301)] == [400, 300, 100, 0]
