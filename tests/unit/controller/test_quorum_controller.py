"""The controller as a pure state machine: operations return records; replay applies them."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kafkalite.controller.quorum_controller import QuorumController
from kafkalite.controller.topic_control import CreatableTopic, spread_replicas, topic_name_error
from kafkalite.metadata.image import MetadataImage
from kafkalite.metadata.records import MetadataRecord, decode_batch, encode_batch
from kafkalite.protocol.errors import ErrorCode

pytestmark = pytest.mark.unit


class Harness:
    """Replays every result's records, as the committed log would."""

    def __init__(self, brokers: int) -> None:
        self.image = MetadataImage()
        self.controller = QuorumController(self.image)
        self.offset = 0
        for b in range(1, brokers + 1):
            self.commit(
                self.controller.register_broker(b, "h", 9000 + b, None, "x", self.offset).records
            )

    def commit(self, records: Sequence[MetadataRecord]) -> None:
        for r in records:
            # every record survives the trip through the log's encoding
            self.image.replay(decode_batch(encode_batch([r]))[0], self.offset)
            self.offset += 1


def test_create_topic_spreads_leaders_over_brokers() -> None:
    h = Harness(3)
    result = h.controller.create_topics([CreatableTopic("orders", 6, 3)])
    assert result.response[0].result.error == ErrorCode.none
    assert h.image.topic("orders") is None  # nothing changes before replay
    h.commit(result.records)
    topic = h.image.topic("orders")
    assert topic is not None
    leaders = [p.leader for p in topic.partitions.values()]
    assert sorted(leaders) == [1, 1, 2, 2, 3, 3]
    for p in topic.partitions.values():
        assert sorted(p.replicas) == [1, 2, 3]
        assert p.isr == p.replicas
        assert p.leader_epoch == 0


def test_create_topic_errors() -> None:
    h = Harness(1)
    h.commit(h.controller.create_topics([CreatableTopic("a", 1, 1)]).records)
    results = h.controller.create_topics(
        [
            CreatableTopic("a", 1, 1),
            CreatableTopic("b", 1, 2),
            CreatableTopic("bad name", 1, 1),
            CreatableTopic("c", 0, 1),
            CreatableTopic("d", 1, 1, configs={"min.insync.replicas": "zero"}),
            CreatableTopic("e", 1, 1, configs={"no.such.config": "1"}),
        ]
    ).response
    assert [r.result.error for r in results] == [
        ErrorCode.topic_already_exists,
        ErrorCode.invalid_replication_factor,
        ErrorCode.invalid_topic_exception,
        ErrorCode.invalid_partitions,
        ErrorCode.invalid_config,
        ErrorCode.invalid_config,
    ]


def test_validate_only_writes_nothing() -> None:
    h = Harness(1)
    result = h.controller.create_topics([CreatableTopic("a", 1, 1)], validate_only=True)
    assert result.records == []
    assert result.response[0].result.error == ErrorCode.none


def test_delete_and_recreate() -> None:
    h = Harness(1)
    h.commit(h.controller.create_topics([CreatableTopic("a", 2, 1)]).records)
    h.commit(h.controller.delete_topics(["a"]).records)
    assert h.image.topic("a") is None
    h.commit(h.controller.create_topics([CreatableTopic("a", 1, 1)]).records)
    topic = h.image.topic("a")
    assert topic is not None and len(topic.partitions) == 1


def test_alter_configs_set_delete_and_replace() -> None:
    h = Harness(1)
    h.commit(h.controller.create_topics([CreatableTopic("a", 1, 1)]).records)
    r = h.controller.alter_configs("topic", "a", {"min.insync.replicas": "2"}, False)
    h.commit(r.records)
    assert h.image.topic_config_source("a", "min.insync.replicas") == ("2", "topic")
    bad = h.controller.alter_configs("topic", "a", {"retention.ms": "-5"}, False)
    assert bad.response.error == ErrorCode.invalid_config and bad.records == []
    h.commit(h.controller.alter_configs("topic", "a", {"retention.ms": "1000"}, True).records)
    assert h.image.topic_config_source("a", "min.insync.replicas") == ("1", "default")
    assert h.image.topic_config_source("a", "retention.ms") == ("1000", "topic")
    h.commit(h.controller.alter_configs("broker", "", {"min.insync.replicas": "3"}, False).records)
    assert h.image.topic_config_source("a", "min.insync.replicas") == ("3", "broker")


def test_producer_id_blocks_never_overlap() -> None:
    h = Harness(2)
    first = h.controller.allocate_producer_ids(1, 0)
    h.commit(first.records)
    second = h.controller.allocate_producer_ids(2, 0)
    h.commit(second.records)
    assert second.response >= first.response + 1000


def test_spread_replicas_are_distinct_and_balanced() -> None:
    for n in range(1, 6):
        for rf in range(1, n + 1):
            assignment = spread_replicas(list(range(1, n + 1)), 12, rf)
            for replicas in assignment.values():
                assert len(set(replicas)) == rf


def test_topic_names() -> None:
    assert topic_name_error("ok.name_1-2") is None
    assert topic_name_error("") is not None
    assert topic_name_error("..") is not None
    assert topic_name_error("x" * 250) is not None
    assert topic_name_error("a/b") is not None


def test_create_partitions_places_new_partitions_where_asked() -> None:
    h = Harness(3)
    h.commit(h.controller.create_topics([CreatableTopic("grow", 1, 2)]).records)
    result = h.controller.create_partitions("grow", 3, assignments=[(3, 1), (2, 3)])
    assert result.response.error == ErrorCode.none
    h.commit(result.records)
    topic = h.image.topic("grow")
    assert topic is not None
    assert [(p.replicas, p.leader) for p in (topic.partitions[1], topic.partitions[2])] == [
        ((3, 1), 3),
        ((2, 3), 2),
    ]


@pytest.mark.parametrize(
    "assignments",
    [[(3, 1)], [(3, 1), (2,)], [(3, 3), (1, 2)], [(3, 9), (1, 2)]],
    ids=["too-few", "wrong-replication-factor", "duplicate-broker", "unknown-broker"],
)
def test_create_partitions_rejects_a_bad_assignment(assignments: list) -> None:
    h = Harness(3)
    h.commit(h.controller.create_topics([CreatableTopic("grow", 1, 2)]).records)
    result = h.controller.create_partitions("grow", 3, assignments=assignments)
    assert result.response.error == ErrorCode.invalid_replica_assignment
    assert result.records == []


def test_a_fenced_replica_is_not_in_a_new_partitions_isr() -> None:
    """Kafka's rule: a new partition's ISR is its live replicas, led by the first. A broker
    that was down when the topic was made joins the ISR by catching up, never by being
    listed (it was, and a test saw it "in sync" with an empty log)."""
    h = Harness(3)
    h.commit(h.controller.fence_broker(1).records)
    created = h.controller.create_topics(
        [CreatableTopic("ledger", 2, 2, assignments={0: (1, 2), 1: (2, 1)})]
    )
    h.commit(created.records)
    grown = h.controller.create_partitions("ledger", 3, assignments=[(1, 3)])
    h.commit(grown.records)
    topic = h.image.topic("ledger")
    assert topic is not None
    assert [(p.isr, p.leader) for _, p in sorted(topic.partitions.items())] == [
        ((2,), 2),
        ((2,), 2),
        ((3,), 3),
    ]


def test_a_new_partition_with_no_live_replica_is_refused() -> None:
    h = Harness(3)
    h.commit(h.controller.fence_broker(1).records)
    h.commit(h.controller.fence_broker(2).records)
    created = h.controller.create_topics(
        [CreatableTopic("ledger", 1, 2, assignments={0: (1, 2)})]
    ).response[0]
    assert created.result.error == ErrorCode.invalid_replica_assignment
    h.commit(h.controller.create_topics([CreatableTopic("grow", 1, 1)]).records)
    grown = h.controller.create_partitions("grow", 2, assignments=[(2,)])
    assert grown.response.error == ErrorCode.invalid_replica_assignment
    assert grown.records == []
