"""The event stream: typed at the emit site, plain JSON strings on the wire."""

from __future__ import annotations

import json

import pytest

from kafkalite.broker.broker_state import BrokerState, BrokerStateMachine
from kafkalite.broker.events import EventLog
from kafkalite.events import EventType

pytestmark = pytest.mark.unit


def test_an_event_carries_its_type_as_the_catalogs_string() -> None:
    events = EventLog(7, lambda: 1234)
    events.emit(EventType.LEADER_ELECTED, topic="t", partition=0, leader_epoch=3)
    [event] = events.since(0)
    assert type(event["type"]) is str
    assert json.loads(json.dumps(event)) == {
        "seq": 1,
        "time_ms": 1234,
        "broker": 7,
        "type": "leader_elected",
        "topic": "t",
        "partition": 0,
        "leader_epoch": 3,
    }


def test_events_emitted_while_the_broker_replays_are_marked_and_since_skips_seen_ones() -> None:
    state = BrokerStateMachine()
    events = EventLog(1, lambda: 0, replaying=lambda: state.replaying_metadata)
    state.move_to(BrokerState.STARTING)
    events.emit(EventType.TOPIC_CREATED, topic="t", topic_id="id")
    state.move_to(BrokerState.RECOVERY)
    events.emit(EventType.BROKER_STARTED, broker_epoch=5)
    assert [e.get("replay", False) for e in events.since(0)] == [True, False]
    assert [e["type"] for e in events.since(1)] == ["broker_started"]


def test_since_and_last_read_the_rings_end_once_older_events_have_fallen_out() -> None:
    events = EventLog(1, lambda: 0, capacity=5)
    for n in range(12):
        events.emit(EventType.TOPIC_CREATED, topic=f"t{n}", topic_id="id")
    assert [e["seq"] for e in events.since(0)] == [8, 9, 10, 11, 12]  # what is still buffered
    assert [e["seq"] for e in events.since(9)] == [10, 11, 12]
    assert events.since(12) == [] and events.since(40) == []
    assert [e["seq"] for e in events.last(2)] == [11, 12]
    assert [e["seq"] for e in events.last(100)] == [8, 9, 10, 11, 12]


def test_catalog_values_are_unique_snake_case_names() -> None:
    values = [t.value for t in EventType]
    assert len(values) == len(set(values))
    assert all(v == v.lower() and " " not in v for v in values)
    assert all(t.value == t.name.lower() for t in EventType)
