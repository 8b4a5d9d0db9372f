"""The group coordinator rebuilds its state from ``__consumer_offsets`` whenever it leads
the partition anew: memory kept from an earlier leadership would miss commits another
coordinator took in between (a commit going backwards, which the chaos checker caught)."""

from __future__ import annotations

import pytest

from kafkalite.coordinator.group.coordinator import GroupCoordinator
from kafkalite.coordinator.group.offsets_log import CommittedOffset, offset_record
from kafkalite.protocol.errors import KafkaError
from tests.unit.coordinator.fakes import FakeOffsetsTopic

pytestmark = pytest.mark.unit


def committed_by_another_coordinator(topic: FakeOffsetsTopic, offset: int) -> None:
    topic.write([offset_record("g", "t", 0, CommittedOffset(offset, 0, None, 0))])


def coordinator(topic: FakeOffsetsTopic) -> GroupCoordinator:
    return GroupCoordinator(topic, lambda: 0, lambda *a, **k: None, lambda: 0, lambda: 60_000)


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
