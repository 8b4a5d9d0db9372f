"""The instructor's table of students (``kafkalite-course students``), one line each."""

from __future__ import annotations

import pytest

from kafkalite.course.hub_admin import describe

pytestmark = pytest.mark.unit


def test_each_student_in_one_line() -> None:
    healthy = {"1": "running", "2": "running", "3": "running"}
    rows = [
        {"student": "ada", "server": "stopped"},
        {"student": "bob", "server": "running", "error": "GET ...: HTTP 503"},
        {"student": "cy", "server": "running", "cluster": None},
        {
            "student": "dee",
            "server": "running",
            "cluster": "/home/kafkalite/labs/.kafkalite",
            "brokers": healthy,
            "brokers_up": 3,
            "last_fault": None,
        },
        {
            "student": "eve",
            "server": "running",
            "cluster": "/home/kafkalite/labs/.kafkalite",
            "brokers": {**healthy, "2": "dead", "3": "paused"},
            "brokers_up": 1,
            "last_fault": {"type": "broker_fenced", "broker": 3, "seconds_ago": 41.6},
        },
    ]
    assert [" ".join(describe(r).split()) for r in rows] == [
        "ada stopped",
        "bob running no answer: GET ...: HTTP 503",
        "cy running no cluster yet",
        "dee running 3/3 brokers up",
        "eve running 1/3 brokers up (2 dead, 3 paused); "
        "last fault: broker_fenced of broker 3 42 s ago",
    ]
