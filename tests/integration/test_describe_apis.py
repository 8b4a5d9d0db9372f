"""What a broker holds, described through the admin clients: DescribeLogDirs and
AlterReplicaLogDirs (kafka-python), DescribeTopicPartitions (kafka-python) and
confluent-kafka's describe_topics, which asks Metadata for the same facts; and the ACL
requests a broker without an authorizer refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import KafkaException, Producer, TopicCollection
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)
from kafka import KafkaAdminClient
from kafka.admin import (
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    ResourcePatternFilter,
)
from kafka.admin import ResourceType as ResourceType_
from kafka.errors import (
    LogDirNotFoundError,
    NoError,
    ReplicaNotAvailableError,
    SecurityDisabledError,
)
from kafka.structs import TopicPartitionReplica

from kafkalite.cluster import Cluster
from tests.support.topics import create_topic

pytestmark = pytest.mark.interop


def test_describe_log_dirs_reports_each_replica_size(cluster: Cluster, topic: str) -> None:
    bootstrap = cluster.bootstrap_servers
    create_topic(bootstrap, topic, 2, 1)
    producer = Producer({"bootstrap.servers": bootstrap})
    for _ in range(50):
        producer.produce(topic, b"x" * 100, partition=1)
    assert producer.flush(10) == 0
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        (described,) = admin.describe_log_dirs({topic: [0, 1]})
        broker = cluster.spec.broker(1)
        log_dir = str(Path(broker.data_dir) / "logs")
        moves = admin.alter_replica_log_dirs(
            {
                TopicPartitionReplica(topic, 0, 1): log_dir,
                TopicPartitionReplica(topic, 1, 1): "/not/a/log/dir",
                TopicPartitionReplica(f"{topic}-missing", 0, 1): log_dir,
            }
        )
    finally:
        admin.close()
    assert described["broker"] == 1
    (directory,) = described["log_dirs"]
    assert (directory["error_code"], directory["log_dir"]) == (0, log_dir)
    assert directory["total_bytes"] >= directory["usable_bytes"] > 0
    (described_topic,) = directory["topics"]
    sizes = {p["partition_index"]: p["partition_size"] for p in described_topic["partitions"]}
    assert sizes[0] == 0
    assert sizes[1] > 50 * 100
    assert [moves[r] for r in sorted(moves)] == [
        NoError,  # already there: one log directory per broker
        LogDirNotFoundError,
        ReplicaNotAvailableError,
    ]


def test_describe_topic_partitions_pages_with_a_cursor(bootstrap: str, topic: str) -> None:
    create_topic(bootstrap, topic, 5, 1)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        seen, cursor = [], None
        while True:
            page = admin.describe_topic_partitions(
                [topic, f"{topic}-missing"], response_partition_limit=2, cursor=cursor
            )
            for t in page["topics"]:
                seen.append(
                    (t["name"], t["error_code"], [p["partition_index"] for p in t["partitions"]])
                )
            cursor = page["next_cursor"]
            if cursor is None:
                break
    finally:
        admin.close()
    assert seen == [
        (topic, 0, [0, 1]),
        (topic, 0, [2, 3]),
        (topic, 0, [4]),
        (f"{topic}-missing", 3, []),  # UNKNOWN_TOPIC_OR_PARTITION, and nothing created
    ]


def test_confluent_describe_topics(bootstrap: str, topic: str) -> None:
    create_topic(bootstrap, topic, 3, 1)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    described = admin.describe_topics(TopicCollection([topic]))[topic].result(10)
    assert [(p.id, p.leader.id, [r.id for r in p.replicas]) for p in described.partitions] == [
        (0, 1, [1]),
        (1, 1, [1]),
        (2, 1, [1]),
    ]


def test_acl_requests_are_answered_security_disabled(bootstrap: str) -> None:
    """No authorizer, as on a Kafka broker without one: a clear error, not a hang."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    binding = AclBinding(
        ResourceType.TOPIC,
        "t",
        ResourcePatternType.LITERAL,
        "User:x",
        "*",
        AclOperation.READ,
        AclPermissionType.ALLOW,
    )
    with pytest.raises(KafkaException, match=r"SECURITY_DISABLED|Security features are disabled"):
        admin.create_acls([binding])[binding].result(10)
    kadmin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        with pytest.raises(SecurityDisabledError):
            kadmin.describe_acls(
                ACLFilter(
                    principal=None,
                    host="*",
                    operation=ACLOperation.ANY,
                    permission_type=ACLPermissionType.ANY,
                    resource_pattern=ResourcePatternFilter(
                        ResourceType_.ANY, None, ACLResourcePatternType.ANY
                    ),
                )
            )
    finally:
        kadmin.close()
