"""An admin change is everywhere once it is answered: a student creates a topic and uses it
in the next line, on any broker.

Seen before the fix: after CreateTopics returned, other brokers listed the topic 4-117 ms
later, so a request sent at once to another broker (ListOffsets, DescribeConfigs,
ElectLeaders) got UNKNOWN_TOPIC_OR_PARTITION. Now the controller answers once every live
broker has replayed the change (their heartbeats report the offset they replayed).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin import NewTopic as ConfluentTopic
from kafka.admin import KafkaAdminClient, NewTopic
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic

from kafkalite.cluster import Cluster
from tests.support.raw import RawConnection

pytestmark = pytest.mark.interop

ROUNDS = 8


def _metadata(topic: str) -> MetadataRequest:
    return MetadataRequest(
        topics=(MetadataRequestTopic(topic_id=None, name=topic),),
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )


def _known_with_leaders(conn: RawConnection, topic: str, partitions: int) -> Any:
    found = conn.request(_metadata(topic)).topics[0]
    leaders = [p.leader_id for p in found.partitions]
    return found.error_code == 0 and len(leaders) == partitions and min(leaders) >= 0


def _unknown(conn: RawConnection, topic: str) -> bool:
    return bool(conn.request(_metadata(topic)).topics[0].error_code == 3)


def test_every_broker_knows_a_topic_as_soon_as_kafka_python_created_it(
    cluster3: Cluster,
) -> None:
    first, *others = cluster3.spec.brokers
    admin = KafkaAdminClient(bootstrap_servers=first.address)
    conns = [RawConnection(b.address) for b in others]
    try:
        for _ in range(ROUNDS):
            topic = f"everywhere-{uuid.uuid4().hex[:8]}"
            admin.create_topics([NewTopic(topic, 3, 3)])
            late = [c for c in conns if not _known_with_leaders(c, topic, 3)]
            assert not late, f"{topic}: {len(late)} broker(s) did not know it yet"
            admin.delete_topics([topic])
            still = [c for c in conns if not _unknown(c, topic)]
            assert not still, f"{topic}: {len(still)} broker(s) still listed it"
    finally:
        admin.close()
        for conn in conns:
            conn.close()


def test_librdkafkas_default_no_wait_creation_is_everywhere_too(cluster3: Cluster) -> None:
    """confluent-kafka sends CreateTopics with timeout 0 unless told otherwise."""
    first, *others = cluster3.spec.brokers
    admin = AdminClient({"bootstrap.servers": first.address})
    conns = [RawConnection(b.address) for b in others]
    try:
        for _ in range(ROUNDS):
            topic = f"everywhere-{uuid.uuid4().hex[:8]}"
            admin.create_topics([ConfluentTopic(topic, 2, 3)])[topic].result(30)
            late = [c for c in conns if not _known_with_leaders(c, topic, 2)]
            assert not late, f"{topic}: {len(late)} broker(s) did not know it yet"
    finally:
        for conn in conns:
            conn.close()
