"""The garbage collector's pauses, timed; and the startup freeze that keeps them short."""

from __future__ import annotations

import gc

import pytest

from kafkalite.broker.gc_pauses import GcPauses, freeze_startup_objects

pytestmark = pytest.mark.unit


def test_each_collection_is_timed_and_full_ones_are_kept_apart() -> None:
    # the clock is read once as each collection starts and once as it stops
    times = iter([1.0, 1.25, 2.0, 2.3, 3.0, 3.01])
    pauses = GcPauses(lambda: next(times))
    for generation in (2, 0, 2):
        pauses.on_collection("start", {"generation": generation})
        pauses.on_collection("stop", {"generation": generation, "collected": 0})
    state = pauses.state()
    assert state["last_full_pause_ms"] == 10.0
    assert state["longest_full_pause_ms"] == 250.0
    assert state["longest_pause_ms"] == 300.0


def test_after_the_freeze_a_full_collection_walks_only_what_came_later() -> None:
    gc.collect()
    before = len(gc.get_objects())
    freeze_startup_objects()
    try:
        made_later = [[i] for i in range(1000)]
        walked = len(gc.get_objects())  # the objects a full collection walks
        assert gc.get_freeze_count() >= before - 1000
        assert 1000 <= walked < before / 10, (walked, before)
        assert made_later
    finally:
        gc.unfreeze()
    assert len(gc.get_objects()) >= before


def test_installed_it_times_real_collections() -> None:
    pauses = GcPauses()
    pauses.install()
    try:
        gc.collect()
    finally:
        gc.callbacks.remove(pauses.on_collection)
    assert pauses.state()["last_full_pause_ms"] > 0
