"""Offsets over time from recorded snapshots: one row per replica per sample."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import pytest

from kafkalite.lab.lab import Lab
from kafkalite.lab.watch import offsets_over_time, plot_offsets

pytestmark = pytest.mark.unit

STATUS = json.loads((Path(__file__).parent / "snapshots" / "broker-3-killed.json").read_text())


def later(status: dict, leo: int) -> dict:
    """The same cluster after the leader of orders-0 appended up to ``leo``."""
    moved = copy.deepcopy(status)
    leader = moved["partitions"][0]["replicas"][0]
    leader["log_end_offset"] = leo
    return moved


def test_each_sample_gives_a_row_per_replica_timed_from_the_first():
    frame = offsets_over_time([(100.0, STATUS), (100.5, later(STATUS, 12))], "orders", 0)
    assert list(frame["t"]) == [0.0] * 3 + [0.5] * 3
    assert frame.columns[0] == "t"
    leader = frame[frame["leader"]]
    assert list(leader["log_end_offset"]) == [8, 12]
    assert list(leader["high_watermark"]) == [8, 8]


def test_no_samples_is_an_empty_table_and_a_watch_plots():
    assert offsets_over_time([], "orders").empty
    frame = offsets_over_time([(0.0, STATUS), (1.0, later(STATUS, 9))], "orders", 0)
    figure = plot_offsets(frame)
    assert figure.axes[0].get_ylabel() == "offset"


class SlowStatus:
    """A cluster whose status takes 0.3 s to answer and shows the leader's LEO as set."""

    def __init__(self) -> None:
        self.leo = 8

    def status(self, timeout_s: float) -> dict:
        snapshot = later(STATUS, self.leo)
        time.sleep(0.3)
        return snapshot


def test_a_watch_ends_with_the_state_its_during_function_left():
    cluster = SlowStatus()

    def append() -> None:
        cluster.leo = 20  # the last thing during() does: nothing samples it before the end

    frame = Lab(cluster).watch("orders", seconds=0.0, during=append, every_s=1.0)  # type: ignore[arg-type]
    assert list(frame[frame["leader"]]["log_end_offset"])[-1] == 20


class BusyBroker(SlowStatus):
    """A broker too busy to answer within a second: a short status shows what it said
    before, only a patient one what it holds now."""

    def __init__(self) -> None:
        super().__init__()
        self.answered = 8

    def status(self, timeout_s: float) -> dict:
        if timeout_s >= 5:
            self.answered = self.leo
        return later(STATUS, self.answered)


def test_a_watch_waits_for_a_busy_broker_in_its_last_sample():
    cluster = BusyBroker()

    def append() -> None:
        cluster.leo = 20

    frame = Lab(cluster).watch("orders", seconds=0.3, during=append, every_s=0.05)  # type: ignore[arg-type]
    assert list(frame[frame["leader"]]["log_end_offset"])[-1] == 20


class Stepping(SlowStatus):
    """A cluster that answers at once and whose leader's LEO the test moves."""

    def status(self, timeout_s: float = 5.0) -> dict:
        return later(STATUS, self.leo)


def test_a_watch_keeps_what_its_during_function_saw_between_samples():
    cluster = Stepping()
    lab = Lab(cluster)  # type: ignore[arg-type]

    def pass_through_20() -> None:
        time.sleep(0.2)  # after the sampler's first sample; its next is 5 s away
        cluster.leo = 20
        lab.wait_for(lambda: lab.replicas("orders")["log_end_offset"].max() == 20, 5, "20")
        cluster.leo = 25  # 20 held only while during() looked at it

    frame = lab.watch("orders", seconds=0.0, during=pass_through_20, every_s=5.0)
    leader = list(frame[frame["leader"]]["log_end_offset"])
    assert leader == [8, 20, 25]
    assert list(frame["t"]) == sorted(frame["t"])
