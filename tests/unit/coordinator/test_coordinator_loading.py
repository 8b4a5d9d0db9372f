"""The group coordinator rebuilds its state from ``__consumer_offsets`` whenever it leads
the partition anew: memory kept from an earlier leadership would miss commits another
coordinator took in between (a commit going backwards, which the chaos checker caught)."""

from __future__ import annotations

import asyncio

import pytest

from kafkalite.coordinator.group.coordinator import GroupCoordinator
from kafkalite.coordinator.group.offsets_log import CommittedOffset, offset_record
from kafkalite.protocol.control_records import ControlType, marker_key, marker_value
from kafkalite.protocol.errors import ErrorCode, KafkaError
from kafkalite.protocol.records import Record
from tests.unit.coordinator.fakes import FakeOffsetsTopic, FakeTopics, consumer_config

pytestmark = pytest.mark.unit


def committed_by_another_coordinator(topic: FakeOffsetsTopic, offset: int) -> None:
    topic.write([offset_record("g", "t", 0, CommittedOffset(offset, 0, None, 0))])


def coordinator(topic: FakeOffsetsTopic) -> GroupCoordinator:
    return GroupCoordinator(
        topic,
        lambda: 0,
        lambda *a, **k: None,
        lambda: 0,
        lambda: 60_000,
        lambda: 0,
        topics=FakeTopics(),
        consumer_config=consumer_config(),
    )


def test_a_new_leadership_reloads_what_others_committed_meanwhile() -> None:
    topic = FakeOffsetsTopic()
    committed_by_another_coordinator(topic, 10)
    c = coordinator(topic)
    assert c.fetch_offsets("g")[("t", 0)].offset == 10
    topic.epoch = None  # leadership moves away...
    with pytest.raises(KafkaError):
        c.fetch_offsets("g")
    committed_by_another_coordinator(topic, 25)  # ...another coordinator takes a commit
    topic.epoch = 2  # ...and comes back
    assert c.fetch_offsets("g")[("t", 0)].offset == 25


def test_a_new_epoch_reloads_even_without_a_request_in_between() -> None:
    """Leadership lost and regained between two requests: the epoch tells."""
    topic = FakeOffsetsTopic()
    committed_by_another_coordinator(topic, 10)
    c = coordinator(topic)
    assert c.fetch_offsets("g")[("t", 0)].offset == 10
    committed_by_another_coordinator(topic, 25)
    topic.epoch = 3
    assert c.fetch_offsets("g")[("t", 0)].offset == 25


async def until_loaded(c: GroupCoordinator) -> None:
    for _ in range(200):
        if not c.manager.is_loading():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the load did not finish")


@pytest.mark.asyncio
async def test_a_big_partition_loads_in_chunks_answering_load_in_progress_meanwhile() -> None:
    topic = FakeOffsetsTopic()
    for offset in range(10):
        committed_by_another_coordinator(topic, offset)
    c = coordinator(topic)
    c.manager.load_buffer_bytes = 3  # batches per chunk in the fake: four chunks
    with pytest.raises(KafkaError) as raised:
        c.fetch_offsets("g")
    assert raised.value.code == ErrorCode.coordinator_load_in_progress
    assert c.manager.is_loading()
    await until_loaded(c)
    assert c.fetch_offsets("g")[("t", 0)].offset == 9


@pytest.mark.asyncio
async def test_a_marker_written_while_loading_is_replayed_by_the_load() -> None:
    """The load reads to the log end of each step, so a transaction's marker appended
    meanwhile (WriteTxnMarkers does not wait for the load) is not missed."""
    topic = FakeOffsetsTopic()
    for offset in range(6):
        committed_by_another_coordinator(topic, offset)
    topic.write([offset_record("g", "t", 0, CommittedOffset(50, 0, None, 0))], 42, 0)
    c = coordinator(topic)
    c.manager.load_buffer_bytes = 2
    with pytest.raises(KafkaError):
        c.fetch_offsets("g")
    kind = ControlType.COMMIT
    topic.write([Record(marker_key(kind), marker_value(0), 0)], 42, 0, control=True)
    c.complete_transaction(0, 42, committed=True)  # not loaded yet: left to the load
    await until_loaded(c)
    assert c.fetch_offsets("g")[("t", 0)].offset == 50
