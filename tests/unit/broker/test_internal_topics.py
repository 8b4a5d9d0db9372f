"""The replication factor the internal topics are created with, on a broker whose
metadata image has not yet replayed every broker's registration.

A three-broker cluster's first FindCoordinator may reach a broker that has registered
itself and one other, not yet the third. Counted from its image, ``__transaction_state``
got two replicas with ``min.insync.replicas`` 2, and killing either of them later stopped
every write to the transaction log (CI: EndTxn answered COORDINATOR_NOT_AVAILABLE for a
minute, then the transaction timed out and the producer was fenced); ``__consumer_offsets``
got two replicas too. The cluster's size comes from ``controller.quorum.voters``, known
from the start; until the image has every broker, neither topic is created
(FindCoordinator answers COORDINATOR_NOT_AVAILABLE and the client asks again).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from kafkalite.broker.data_plane.group_offsets import BrokerOffsetsTopic
from kafkalite.broker.data_plane.internal_topic import InternalTopic
from kafkalite.broker.data_plane.transaction_state import BrokerTransactionStateTopic
from kafkalite.controller.topic_control import CreatableTopic
from kafkalite.metadata.image import MetadataImage
from kafkalite.metadata.records import (
    FenceBrokerRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
)

pytestmark = pytest.mark.unit


class RecordingController:
    """Takes the creation request and creates nothing (``ensure_exists`` only asks)."""

    def __init__(self) -> None:
        self.requested: list[CreatableTopic] = []

    async def create_topics(self, topics: Sequence[CreatableTopic], **_: Any) -> list[Any]:
        self.requested.extend(topics)
        return []


def image_with_brokers(*broker_ids: int) -> MetadataImage:
    image = MetadataImage()
    offset = 0
    for b in broker_ids:
        image.replay(RegisterBrokerRecord(b, "127.0.0.1", 9090 + b, None, f"i{b}", 5), offset)
        image.replay(UnfenceBrokerRecord(b, 5), offset + 1)
        offset += 2
    return image


def requested(
    image: MetadataImage, cluster_size: int, kind: type[InternalTopic] = BrokerTransactionStateTopic
) -> list[CreatableTopic]:
    controller = RecordingController()
    topic = kind(
        image,
        None,  # type: ignore[arg-type]  # creating the topic reads no replica
        controller,  # type: ignore[arg-type]
        cluster_size=cluster_size,
    )
    asyncio.run(topic.ensure_exists())
    return controller.requested


def created(
    image: MetadataImage, cluster_size: int, kind: type[InternalTopic] = BrokerTransactionStateTopic
) -> CreatableTopic:
    [request] = requested(image, cluster_size, kind)
    return request


@pytest.mark.parametrize("kind", [BrokerTransactionStateTopic, BrokerOffsetsTopic])
def test_a_broker_that_has_not_yet_seen_every_registration_waits_for_them(
    kind: type[InternalTopic],
) -> None:
    image = image_with_brokers(1, 3)
    assert requested(image, cluster_size=3, kind=kind) == []
    image.replay(RegisterBrokerRecord(2, "127.0.0.1", 9092, None, "i2", 5), 10)
    image.replay(UnfenceBrokerRecord(2, 5), 11)
    assert created(image, cluster_size=3, kind=kind).replication_factor == 3


def test_the_transaction_log_keeps_min_insync_replicas_below_its_replicas() -> None:
    request = created(image_with_brokers(1, 2, 3), cluster_size=3)
    assert request.replication_factor == 3
    assert request.configs["min.insync.replicas"] == "2"  # one replica may be lost


def test_a_one_broker_lab_gets_one_replica() -> None:
    request = created(image_with_brokers(1), cluster_size=1)
    assert request.replication_factor == 1
    assert request.configs["min.insync.replicas"] == "1"
    assert created(image_with_brokers(1), 1, BrokerOffsetsTopic).replication_factor == 1


def test_the_configured_replication_factor_caps_it() -> None:
    image = image_with_brokers(1, 2, 3, 4, 5)
    assert created(image, cluster_size=5).replication_factor == 3  # the default
    assert created(image, 5, BrokerOffsetsTopic).replication_factor == 3


def test_a_killed_broker_costs_the_offsets_topic_a_replica_not_the_transaction_log() -> None:
    """A lab that killed a broker before its first consumer group still gets its offsets
    topic (two replicas); the transaction log insists on three (creating it fails until the
    broker is back)."""
    image = image_with_brokers(1, 2, 3)
    image.replay(FenceBrokerRecord(2, 5), 10)
    assert created(image, 3, BrokerOffsetsTopic).replication_factor == 2
    assert created(image, 3, BrokerTransactionStateTopic).replication_factor == 3
