"""What a command that changes the cluster says it did, and how ``kafkalite events``
prints an event."""

from __future__ import annotations

import pytest

from kafkalite.cli.events_view import event_line
from kafkalite.cli.reports import down_report, fault_report, restart_report
from kafkalite.cluster import BrokerState

pytestmark = pytest.mark.unit


def test_each_verb_names_the_broker_its_state_and_the_undo() -> None:
    assert fault_report("kill", 3, BrokerState.DEAD) == (
        "broker 3 was killed (SIGKILL): a crash, no shutdown; it is now dead "
        "(`kafkalite start 3` undoes it)"
    )
    assert "fetches from its leaders 300 ms late" in fault_report(
        "slow", 2, BrokerState.RUNNING, 300
    )
    assert fault_report("isolate", 1, BrokerState.ISOLATED).endswith(
        "it is now isolated (`kafkalite heal 1` undoes it)"
    )
    assert fault_report("start", 1, BrokerState.RUNNING) == "broker 1 started; it is now running"


def test_a_stop_that_ended_in_sigkill_says_so() -> None:
    line = fault_report("stop", 2, BrokerState.DEAD)
    assert "was killed (SIGKILL)" in line and "no controlled shutdown" in line


def test_restart_says_what_it_did_to_a_running_a_stopped_and_a_dead_broker() -> None:
    running, stopped, dead = BrokerState.RUNNING, BrokerState.STOPPED, BrokerState.DEAD
    assert restart_report(2, running, stopped, running) == [
        "broker 2 restarted (controlled shutdown, then started); it is now running"
    ]
    assert restart_report(2, dead, None, running) == [
        "broker 2 started (it was not running: it was dead); it is now running"
    ]
    assert restart_report(3, stopped, None, running) == [
        "broker 3 started (it was not running: it was stopped); it is now running"
    ]
    killed, started = restart_report(1, running, dead, running)
    assert "was killed (SIGKILL)" in killed and started == "broker 1 started; it is now running"


def test_down_names_every_broker_stopped_killed_or_already_down() -> None:
    before = {1: BrokerState.RUNNING, 2: BrokerState.PAUSED, 3: BrokerState.DEAD}
    after = {1: BrokerState.STOPPED, 2: BrokerState.DEAD, 3: BrokerState.DEAD}
    assert down_report(before, after) == [
        "stopped broker 1 (controlled shutdown)",
        "broker 2 did not shut down in time and was killed (SIGKILL)",
        "broker 3 (dead) already down",
    ]
    assert down_report(after, after) == ["brokers 1 (stopped), 2 (dead), 3 (dead) already down"]


def test_an_event_line_has_its_time_broker_type_and_fields() -> None:
    event = {
        "seq": 4,
        "time_ms": 0,
        "broker": 2,
        "type": "truncated",
        "topic": "t",
        "partition": 0,
        "removed": [5, 6],
        "replay": True,
    }
    line = event_line(event)
    assert "broker 2  truncated (replay)  topic=t partition=0 removed=[5,6]" in line
    assert "seq=" not in line and "time_ms" not in line
