"""Fault windows open with the verb that breaks a broker and close with the one that
undoes it."""

from __future__ import annotations

import itertools

import pytest

from kafkalite.lab.faults import FaultLog

pytestmark = pytest.mark.unit


def log() -> FaultLog:
    ticks = itertools.count(1)
    return FaultLog(clock=lambda: float(next(ticks)))


def test_start_closes_a_kill_and_resume_closes_a_pause():
    faults = log()
    faults.opened("kill", 2)  # t=1
    faults.opened("pause", 3)  # t=2
    faults.closed("resume", 3)  # t=3
    faults.closed("start", 2)  # t=4
    assert [(w.label, w.start, w.end) for w in faults.windows] == [
        ("kill 2", 1.0, 4.0),
        ("pause 3", 2.0, 3.0),
    ]


def test_heal_without_a_broker_ends_every_isolation_and_slowness_but_not_a_kill():
    faults = log()
    faults.opened("isolate", 1)
    faults.opened("slow", 2)
    faults.opened("kill", 3)
    faults.closed("heal", None)
    assert [w.end is None for w in faults.windows] == [False, False, True]


def test_heal_of_one_broker_leaves_the_others_broken():
    faults = log()
    faults.opened("isolate", 1)
    faults.opened("isolate", 2)
    faults.closed("heal", 2)
    assert [(w.broker, w.end is None) for w in faults.windows] == [(1, True), (2, False)]


def test_breaking_a_broken_broker_again_keeps_its_first_window():
    faults = log()
    faults.opened("isolate", 1)
    faults.opened("isolate", 1)
    faults.opened("isolate", 1, at=0.5)
    assert len(faults.windows) == 1 and faults.windows[0].start == 1.0
