"""What a committed partition change is told as: driven directly, no broker."""

from __future__ import annotations

from typing import Any

import pytest

from kafkalite.broker.data_plane.partition_events import emit_partition_change
from kafkalite.events import EventType
from kafkalite.metadata.image import PartitionRegistration
from kafkalite.metadata.records import RECOVERING, PartitionChangeRecord

pytestmark = pytest.mark.unit


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[EventType, dict[str, Any]]] = []

    def __call__(self, event_type: EventType, /, **fields: Any) -> None:
        self.events.append((event_type, fields))


BEFORE = PartitionRegistration((1, 2, 3), (1, 2, 3), 1, 4, 7)


def test_the_leader_tells_an_isr_shrink_and_the_others_stay_silent() -> None:
    after = PartitionRegistration((1, 2, 3), (1, 2), 1, 4, 8)
    record = PartitionChangeRecord("t-id", 0, isr=(1, 2))
    leader, follower = Recorder(), Recorder()
    emit_partition_change(leader, 1, "t", record, BEFORE, after)
    emit_partition_change(follower, 2, "t", record, BEFORE, after)
    assert leader.events == [
        (EventType.ISR_SHRUNK, {"topic": "t", "partition": 0, "removed": [3], "isr": [1, 2]})
    ]
    assert follower.events == []


def test_an_unclean_election_is_told_with_the_isr_it_bypassed() -> None:
    before = PartitionRegistration((1, 2), (1,), -1, 4, 7)
    after = PartitionRegistration((1, 2), (2,), 2, 5, 8)
    record = PartitionChangeRecord("t-id", 0, leader=2, isr=(2,), leader_recovery_state=RECOVERING)
    recorder = Recorder()
    emit_partition_change(recorder, 2, "t", record, before, after)
    types = [t for t, _ in recorder.events]
    assert types == [EventType.ISR_SHRUNK, EventType.ISR_EXPANDED, EventType.UNCLEAN_LEADER_ELECTED]
    assert recorder.events[-1][1]["previous_isr"] == [1]
