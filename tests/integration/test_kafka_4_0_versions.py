"""What the versions Kafka 4.0 added mean, checked on the wire with kio's requests.

The client libraries cover the common paths (``test_client_versions``); these check the
semantics each new version brings, as Kafka 4.0 defines them: batched FindCoordinator
(v4+) and OffsetFetch (v8+), OffsetCommit v9's GROUP_ID_NOT_FOUND, DescribeGroups v6's
GROUP_ID_NOT_FOUND, ListGroups v5's group types, CreateTopics v7's topic id, DeleteTopics
v6 by topic id, DescribeCluster v2's fenced brokers, and the closed connection (logged
with the API and version) for a version this broker does not speak.
"""

from __future__ import annotations

import datetime
import uuid
from pathlib import Path

import pytest
from kio.schema.create_topics.v7 import request as create_v7
from kio.schema.delete_topics.v6 import request as delete_v6
from kio.schema.describe_cluster.v2.request import DescribeClusterRequest
from kio.schema.describe_groups.v5.request import DescribeGroupsRequest as DescribeGroupsV5
from kio.schema.describe_groups.v6.request import DescribeGroupsRequest as DescribeGroupsV6
from kio.schema.find_coordinator.v6.request import FindCoordinatorRequest
from kio.schema.list_groups.v5.request import ListGroupsRequest
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.schema.offset_commit.v9 import request as commit_v9
from kio.schema.offset_fetch.v9 import request as fetch_v9
from kio.schema.produce.v13.request import ProduceRequest as ProduceV13

from kafkalite.cluster import Cluster
from tests.support.raw import RawConnection
from tests.support.waiting import wait_for

pytestmark = pytest.mark.interop

TIMEOUT = datetime.timedelta(seconds=10)


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _create(conn: RawConnection, topic: str, partitions: int = 1) -> uuid.UUID:
    """CreateTopics v7; returns the id it answers, checked against Metadata's."""
    response = conn.request(
        create_v7.CreateTopicsRequest(
            topics=(
                create_v7.CreatableTopic(
                    name=topic,
                    num_partitions=partitions,
                    replication_factor=1,
                    assignments=(),
                    configs=(),
                ),
            ),
            timeout=TIMEOUT,
            validate_only=False,
        )
    )
    (result,) = response.topics
    assert result.error_code == 0
    assert result.topic_id not in (None, uuid.UUID(int=0))
    metadata = conn.request(
        MetadataRequest(
            topics=(MetadataRequestTopic(topic_id=None, name=topic),),
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=False,
        )
    )
    assert metadata.topics[0].topic_id == result.topic_id
    return result.topic_id


def _commit(conn: RawConnection, group: str, topic: str, offset: int, generation: int = -1) -> int:
    """OffsetCommit v9's error for ``group``, after FindCoordinator, as a client does: the
    first FindCoordinator creates ``__consumer_offsets`` (run alone, this test once
    committed to a cluster with no group coordinator yet and waited in vain)."""
    found = conn.request(FindCoordinatorRequest(key_type=0, coordinator_keys=(group,)))
    if found.coordinators[0].error_code:
        return int(found.coordinators[0].error_code)
    response = conn.request(
        commit_v9.OffsetCommitRequest(
            group_id=group,
            generation_id_or_member_epoch=generation,
            member_id="",
            group_instance_id=None,
            topics=(
                commit_v9.OffsetCommitRequestTopic(
                    name=topic,
                    partitions=(
                        commit_v9.OffsetCommitRequestPartition(
                            partition_index=0,
                            committed_offset=offset,
                            committed_leader_epoch=-1,
                            committed_metadata="",
                        ),
                    ),
                ),
            ),
        )
    )
    return int(response.topics[0].partitions[0].error_code)


def test_find_coordinator_v6_answers_each_key(bootstrap: str) -> None:
    with RawConnection(bootstrap) as conn:
        groups = conn.request(FindCoordinatorRequest(key_type=0, coordinator_keys=("a", "b")))
        txns = conn.request(FindCoordinatorRequest(key_type=1, coordinator_keys=("t",)))
        shares = conn.request(FindCoordinatorRequest(key_type=2, coordinator_keys=("s:x:0",)))
    assert [(c.key, c.error_code) for c in groups.coordinators] == [("a", 0), ("b", 0)]
    host, port = bootstrap.rsplit(":", 1)
    assert {(c.host, c.port) for c in groups.coordinators + txns.coordinators} == {
        (host, int(port))
    }
    # Kafka-Lite has no share groups (KIP-932): the key type is refused, as Kafka refuses it
    # where share groups are off
    assert [(c.key, c.error_code, c.node_id) for c in shares.coordinators] == [("s:x:0", 42, -1)]


def test_offset_commit_and_fetch_v9(bootstrap: str) -> None:
    topic, group, other = _name("t"), _name("g"), _name("g")
    with RawConnection(bootstrap) as conn:
        _create(conn, topic)
        wait_for(lambda: _commit(conn, group, topic, 7) == 0, what="a simple group's commit")
        # a member's commit (generation >= 0) to a group that does not exist
        assert _commit(conn, _name("nobody"), topic, 1, generation=3) == 69  # GROUP_ID_NOT_FOUND
        fetched = conn.request(
            fetch_v9.OffsetFetchRequest(
                groups=(
                    fetch_v9.OffsetFetchRequestGroup(group_id=group, topics=None),
                    fetch_v9.OffsetFetchRequestGroup(
                        group_id=other,
                        topics=(
                            fetch_v9.OffsetFetchRequestTopics(name=topic, partition_indexes=(0,)),
                        ),
                    ),
                ),
                require_stable=True,
            )
        )
    answers = {
        g.group_id: (
            g.error_code,
            [
                (t.name, p.partition_index, p.committed_offset)
                for t in g.topics
                for p in t.partitions
            ],
        )
        for g in fetched.groups
    }
    assert answers == {group: (0, [(topic, 0, 7)]), other: (0, [(topic, 0, -1)])}


def test_describe_and_list_groups_v6_v5(bootstrap: str) -> None:
    topic, group = _name("t"), _name("g")
    missing = _name("missing")
    with RawConnection(bootstrap) as conn:
        _create(conn, topic)
        wait_for(lambda: _commit(conn, group, topic, 1) == 0, what="a simple group")
        v6 = conn.request(
            DescribeGroupsV6(groups=(missing, group), include_authorized_operations=False)
        )
        v5 = conn.request(DescribeGroupsV5(groups=(missing,), include_authorized_operations=False))
        classic = conn.request(
            ListGroupsRequest(states_filter=("EMPTY",), types_filter=("Classic",))
        )
        consumer = conn.request(ListGroupsRequest(states_filter=(), types_filter=("consumer",)))
    gone, found = v6.groups
    assert (gone.error_code, gone.group_state, gone.error_message) == (
        69,
        "Dead",
        f"Group {missing} not found.",
    )
    assert (found.error_code, found.group_state) == (0, "Empty")
    assert (v5.groups[0].error_code, v5.groups[0].group_state) == (0, "Dead")
    listed = {g.group_id: (g.group_state, g.group_type) for g in classic.groups}
    assert listed[group] == ("Empty", "classic")
    assert group not in {g.group_id for g in consumer.groups}


def test_delete_topics_v6_by_id(bootstrap: str) -> None:
    topic = _name("t")
    stranger = uuid.uuid4()
    with RawConnection(bootstrap) as conn:
        topic_id = _create(conn, topic)
        response = conn.request(
            delete_v6.DeleteTopicsRequest(
                topics=(
                    delete_v6.DeleteTopicState(name=None, topic_id=topic_id),
                    delete_v6.DeleteTopicState(name=None, topic_id=stranger),
                ),
                timeout=TIMEOUT,
            )
        )
    results = {r.topic_id: (r.name, r.error_code) for r in response.responses}
    assert results == {topic_id: (topic, 0), stranger: (None, 100)}  # 100: UNKNOWN_TOPIC_ID


def test_describe_cluster_v2_lists_fenced_brokers_when_asked(bootstrap: str) -> None:
    with RawConnection(bootstrap) as conn:
        response = conn.request(
            DescribeClusterRequest(
                include_cluster_authorized_operations=False, include_fenced_brokers=True
            )
        )
    assert [(b.port, b.is_fenced) for b in response.brokers] == [
        (int(bootstrap.rsplit(":", 1)[1]), False)
    ]


def test_a_version_not_spoken_closes_and_is_logged(cluster: Cluster, bootstrap: str) -> None:
    """Produce v13 (Kafka 4.1, topic ids) is above what this broker speaks: the connection
    closes, as Kafka closes it, and the broker says why at INFO with the API and version."""
    request = ProduceV13(transactional_id=None, acks=1, timeout=TIMEOUT, topic_data=())
    with RawConnection(bootstrap) as conn:
        conn.send(request)
        with pytest.raises(ConnectionError):
            conn.read_frame()
    log = Path(cluster.spec.brokers[0].data_dir) / "broker.log"
    wait_for(
        lambda: (
            "INFO" in (line := _last_line_with(log, "Produce v13 is not supported"))
            and "this broker speaks v3-" in line
        ),
        what="the closed connection's cause in broker.log",
    )


def _last_line_with(log: Path, text: str) -> str:
    lines = [line for line in log.read_text().splitlines() if text in line]
    return lines[-1] if lines else ""
