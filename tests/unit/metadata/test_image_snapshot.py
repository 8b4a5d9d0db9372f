"""A metadata snapshot rebuilds the image it was taken from (``MetadataImage.to_records``).

A broker that loads a snapshot instead of replaying the log must end with the same image,
or it would disagree with the others about leaders, ISRs, configs or producer ids. Random
histories of metadata records (hypothesis) are replayed, snapshotted, sent through the
snapshot's byte encoding and replayed into an empty image, which must equal the original.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite.metadata.image import MetadataImage
from kafkalite.metadata.records import (
    ConfigRecord,
    FenceBrokerRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    decode_batch,
    encode_batch,
)

pytestmark = pytest.mark.unit
BROKERS = (1, 2, 3)
replica_sets = st.permutations(BROKERS).map(tuple)


def state(image: MetadataImage) -> dict[str, object]:
    """Everything the image knows, but the offset of the last record replayed."""
    fields = dataclasses.asdict(image)
    fields.pop("offset")
    return fields


@st.composite
def histories(draw: st.DrawFn) -> list[MetadataRecord]:
    """A valid history: records only about brokers and topics that exist at that point."""
    records: list[MetadataRecord] = []
    epochs = {b: draw(st.integers(0, 50)) for b in BROKERS}
    for b in BROKERS:
        rack = draw(st.none() | st.sampled_from(["rack-a", "rack-b"]))
        records.append(RegisterBrokerRecord(b, "127.0.0.1", 9090 + b, rack, f"inc-{b}", epochs[b]))
    topics: list[str] = []
    for step in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["topic", "change", "fence", "config", "remove", "pids"]))
        if kind == "topic" or (kind in ("change", "remove") and not topics):
            topic_id = f"id-{step}"
            records.append(TopicRecord(f"t{step}", topic_id))
            for partition in range(draw(st.integers(1, 3))):
                replicas = draw(replica_sets)
                records.append(
                    PartitionRecord(topic_id, partition, replicas, replicas, replicas[0], 0, 0)
                )
            topics.append(topic_id)
        elif kind == "change":
            records.append(
                PartitionChangeRecord(
                    draw(st.sampled_from(topics)),
                    0,
                    leader=draw(st.none() | st.sampled_from(BROKERS)),
                    isr=draw(st.none() | replica_sets.map(lambda r: r[:2])),
                    adding_replicas=draw(st.none() | st.just((3,))),
                    removing_replicas=draw(st.none() | st.just((1,))),
                )
            )
        elif kind == "fence":
            b = draw(st.sampled_from(BROKERS))
            fence = draw(st.booleans())
            records.append((FenceBrokerRecord if fence else UnfenceBrokerRecord)(b, epochs[b]))
        elif kind == "config":
            resource_type, resource = draw(
                st.sampled_from([("broker", ""), ("broker", "2"), ("group", "g"), ("topic", "t0")])
            )
            name = draw(st.sampled_from(["retention.ms", "min.insync.replicas", "x.y"]))
            records.append(
                ConfigRecord(resource_type, resource, name, draw(st.none() | st.just("7")))
            )
        elif kind == "remove":
            records.append(RemoveTopicRecord(topics.pop(draw(st.integers(0, len(topics) - 1)))))
        else:
            records.append(ProducerIdsRecord(draw(st.sampled_from(BROKERS)), 0, 1000 * (step + 1)))
    return records


@settings(max_examples=200, deadline=None)
@given(history=histories())
def test_a_snapshot_replayed_into_an_empty_image_rebuilds_it(
    history: list[MetadataRecord],
) -> None:
    image = MetadataImage()
    for offset, record in enumerate(history):
        image.replay(record, offset)
    snapshot = decode_batch(encode_batch(image.to_records()))  # as stored on disk
    rebuilt = MetadataImage()
    for record in snapshot:
        rebuilt.replay(record, len(history) - 1)
    assert state(rebuilt) == state(image)


def test_a_fenced_broker_a_reassignment_and_removed_configs_survive_a_snapshot() -> None:
    """The cases a snapshot must not flatten, spelled out."""
    history: list[MetadataRecord] = [
        RegisterBrokerRecord(1, "h", 1, None, "i1", 4),
        RegisterBrokerRecord(2, "h", 2, "rack", "i2", 5),
        UnfenceBrokerRecord(1, 4),
        UnfenceBrokerRecord(2, 5),
        FenceBrokerRecord(2, 5),
        TopicRecord("t", "id"),
        PartitionRecord("id", 0, (1, 2), (1, 2), 1, 0, 0),
        PartitionChangeRecord("id", 0, leader=2, isr=(2,)),
        PartitionChangeRecord(
            "id", 0, replicas=(2, 3, 1), adding_replicas=(3,), removing_replicas=(1,)
        ),
        ConfigRecord("topic", "t", "retention.ms", "1000"),
        ConfigRecord("topic", "t", "retention.ms", None),
        ConfigRecord("broker", "", "min.insync.replicas", "2"),
        ProducerIdsRecord(1, 4, 5000),
    ]
    image = MetadataImage()
    for offset, record in enumerate(history):
        image.replay(record, offset)
    rebuilt = MetadataImage()
    for record in image.to_records():
        rebuilt.replay(record, 0)
    assert state(rebuilt) == state(image)
    partition = rebuilt.partition("t", 0)
    assert partition is not None
    assert (partition.leader, partition.leader_epoch, partition.partition_epoch) == (2, 1, 2)
    assert partition.is_reassigning
    assert rebuilt.brokers[2].fenced and not rebuilt.brokers[1].fenced
    assert rebuilt.topic_configs == {}  # the override is gone, not an empty one
