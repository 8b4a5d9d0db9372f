"""Topics created by a Metadata request (``auto.create.topics.enable``), as Kafka answers them.

The request that creates a topic is answered LEADER_NOT_AVAILABLE, a retriable error every
client answers by asking again: the partitions' leaders are only now learning of the topic.
Without a controller (no quorum) the answer is the same error, never a dropped connection.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic

from tests.support.raw import RawConnection, list_offsets_request
from tests.support.waiting import wait_for

pytestmark = pytest.mark.interop

LEADER_NOT_AVAILABLE = 5
UNKNOWN_TOPIC_OR_PARTITION = 3


def _metadata(topic: str) -> MetadataRequest:
    return MetadataRequest(
        topics=(MetadataRequestTopic(topic_id=None, name=topic),),
        allow_auto_topic_creation=True,
        include_topic_authorized_operations=False,
    )


def _until_it_has_a_leader(conn: RawConnection, topic: str) -> Any:
    return wait_for(
        lambda: (t := conn.request(_metadata(topic)).topics[0]).error_code == 0 and t,
        what=f"{topic} with a leader",
    )


def test_the_creating_request_is_answered_leader_not_available(bootstrap: str, topic: str) -> None:
    with RawConnection(bootstrap) as conn:
        first = conn.request(_metadata(topic)).topics[0]
        assert (first.name, first.error_code) == (topic, LEADER_NOT_AVAILABLE)
        later = _until_it_has_a_leader(conn, topic)
    assert [p.partition_index for p in later.partitions] == [0]


def test_the_leader_knows_an_auto_created_topic_once_metadata_names_it(cluster3) -> None:
    """Created through one broker, then asked of its leader at once: never unknown there."""
    addresses = {b.broker_id: f"{b.host}:{b.port}" for b in cluster3.spec.brokers}
    for i in range(12):
        topic = f"auto-{i}-{time.monotonic_ns()}"
        asked = addresses[1 + i % 3]
        with RawConnection(asked) as conn:
            found = _until_it_has_a_leader(conn, topic)
        leader = found.partitions[0].leader_id
        with RawConnection(addresses[leader]) as conn:
            answer = conn.request(list_offsets_request(topic)).topics[0].partitions[0]
        assert answer.error_code == 0, f"{topic}: leader {leader} answered {answer.error_code}"


def test_without_a_controller_auto_create_is_a_retriable_error(make_cluster3) -> None:
    cluster = make_cluster3()
    cluster.kill(2)
    cluster.kill(3)  # no quorum: nobody can create topics
    address = f"{cluster.spec.broker(1).host}:{cluster.spec.broker(1).port}"
    with RawConnection(address, timeout=30) as conn:
        started = time.monotonic()
        answer = conn.request(_metadata("created-without-a-quorum")).topics[0]
        assert answer.error_code == LEADER_NOT_AVAILABLE
        assert time.monotonic() - started < 20  # within any client's request timeout
        # the connection is still there for the client's next question
        assert conn.request(_metadata("created-without-a-quorum")).topics[0].error_code in (
            LEADER_NOT_AVAILABLE,
            UNKNOWN_TOPIC_OR_PARTITION,
        )
