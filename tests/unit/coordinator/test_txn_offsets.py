"""Offsets committed in a transaction count only once its commit marker is written, both
in the coordinator's memory and when a new coordinator replays ``__consumer_offsets``."""

from __future__ import annotations

import pytest

from kafkalite.coordinator.group.coordinator import GroupCoordinator
from kafkalite.coordinator.group.offsets_log import CommittedOffset
from kafkalite.protocol.control_records import ControlType, marker_key, marker_value
from kafkalite.protocol.records import Record
from tests.unit.coordinator.fakes import FakeOffsetsTopic
from tests.unit.coordinator.test_coordinator_loading import coordinator

pytestmark = [pytest.mark.unit, pytest.mark.asyncio]
TP = ("in", 0)


def at(offset: int) -> dict[tuple[str, int], CommittedOffset]:
    return {TP: CommittedOffset(offset, -1, None, 0)}


def write_marker(topic: FakeOffsetsTopic, producer_id: int, committed: bool) -> None:
    """What WriteTxnMarkers appends on the partition (before it tells the coordinator)."""
    kind = ControlType.COMMIT if committed else ControlType.ABORT
    topic.write([Record(marker_key(kind), marker_value(0), 0)], producer_id, 0, control=True)


def offset_of(c: GroupCoordinator) -> int | None:
    found = c.fetch_offsets("g").get(TP)
    return None if found is None else found.offset


async def test_pending_until_the_commit_marker_then_committed() -> None:
    topic = FakeOffsetsTopic()
    c = coordinator(topic)
    await c.commit("g", -1, "", at(5))
    await c.commit_transactional("g", 42, 0, -1, "", at(10))
    assert offset_of(c) == 5 and c.unstable_offsets("g") == {TP}
    write_marker(topic, 42, committed=True)
    c.complete_transaction(0, 42, committed=True)
    assert offset_of(c) == 10 and c.unstable_offsets("g") == set()
    topic.epoch = 7  # a new leadership replays the log and agrees
    assert offset_of(coordinator(topic)) == 10


async def test_an_abort_marker_drops_them() -> None:
    topic = FakeOffsetsTopic()
    c = coordinator(topic)
    await c.commit("g", -1, "", at(5))
    await c.commit_transactional("g", 42, 0, -1, "", at(10))
    write_marker(topic, 42, committed=False)
    c.complete_transaction(0, 42, committed=False)
    assert offset_of(c) == 5
    topic.epoch = 7
    assert offset_of(coordinator(topic)) == 5


async def test_a_replay_keeps_an_open_transaction_pending() -> None:
    topic = FakeOffsetsTopic()
    await coordinator(topic).commit_transactional("g", 42, 0, -1, "", at(10))
    topic.epoch = 7
    c = coordinator(topic)
    assert offset_of(c) is None and c.unstable_offsets("g") == {TP}
    write_marker(topic, 42, committed=True)
    c.complete_transaction(0, 42, committed=True)
    assert offset_of(c) == 10


async def test_a_plain_commit_written_later_wins_over_the_transaction() -> None:
    topic = FakeOffsetsTopic()
    c = coordinator(topic)
    await c.commit_transactional("g", 42, 0, -1, "", at(10))
    await c.commit("g", -1, "", at(20))
    write_marker(topic, 42, committed=True)
    c.complete_transaction(0, 42, committed=True)
    assert offset_of(c) == 20
    topic.epoch = 7
    assert offset_of(coordinator(topic)) == 20
