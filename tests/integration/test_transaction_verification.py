"""KIP-890's server-side defense against hanging transactions, with a real producer.

A kafka-python transactional producer commits a transaction on partition 0. Then a batch
of that producer's id and epoch, marked transactional, reaches partition 1 - which no
transaction of it holds: a zombie's write, or a retry delayed past the end of its
transaction. Without verification (Kafka before 3.6, or
``transaction.partition.verification.enable=false``) the leader appends it and thereby
opens a transaction that no coordinator knows of: the partition's last stable offset
stops below the high watermark for good, and read_committed consumers stop with it (a
hanging transaction). With verification the leader asks the coordinator first and refuses
the batch: INVALID_TXN_STATE to Produce v10 and older, TRANSACTION_ABORTABLE from v11.
The three-broker case puts the coordinator on another broker than the leader, so the
leader asks it over the network (AddPartitionsToTxn v5, verify_only).
"""

from __future__ import annotations

import dataclasses
import datetime
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient, KafkaProducer
from kafka import TopicPartition as KTopicPartition
from kio.schema.find_coordinator.v3.request import FindCoordinatorRequest
from kio.schema.produce.v9 import request as produce_v9
from kio.schema.produce.v11 import request as produce_v11
from kio.schema.txn_offset_commit.v3 import request as txn_offset_commit_v3
from kio.schema.txn_offset_commit.v4 import request as txn_offset_commit_v4

from kafkalite.cluster import Cluster
from kafkalite.protocol.records import Record, build_batch
from tests.support.raw import RawConnection, list_offsets_request
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

pytestmark = pytest.mark.interop

INVALID_TXN_STATE = 48
TRANSACTION_ABORTABLE = 120
NOT_ENOUGH_REPLICAS = 19
"""The answer while the coordinator still writes the commit's markers (it says
CONCURRENT_TRANSACTIONS): retriable, as every producer treats it."""


def _committed_transaction(bootstrap: str, topic: str) -> tuple[str, int, int]:
    """(transactional id, producer id, epoch) of a producer that committed one record on
    partition 0."""
    txn_id = f"verify-{uuid.uuid4().hex[:8]}"
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id)
    producer.init_transactions()
    producer.begin_transaction()
    producer.send(topic, b"committed", partition=0)
    producer.commit_transaction()
    ids = producer._transaction_manager.producer_id_and_epoch
    producer.close()
    return txn_id, int(ids.producer_id), int(ids.epoch)


def _late_write(
    address: str,
    topic: str,
    txn_id: str,
    producer_id: int,
    epoch: int,
    version: Any,
    partition: int = 1,
) -> int:
    """A transactional batch of the producer on ``partition``, with ``version``'s Produce."""
    batch = build_batch(
        [Record(None, b"late", int(datetime.datetime.now().timestamp() * 1000))],
        producer_id=producer_id,
        producer_epoch=epoch,
        base_sequence=0,
        transactional=True,
    )
    request = version.ProduceRequest(
        transactional_id=txn_id,
        acks=-1,
        timeout=datetime.timedelta(seconds=10),
        topic_data=(
            version.TopicProduceData(
                name=topic,
                partition_data=(version.PartitionProduceData(index=partition, records=batch),),
            ),
        ),
    )

    def answer() -> int:
        with RawConnection(address) as conn:
            response = conn.request(request)
        return int(response.responses[0].partition_responses[0].error_code)

    code = wait_for(
        lambda: (c := answer()) != NOT_ENOUGH_REPLICAS and c + 1, what="a settled answer"
    )
    return code - 1


def _offsets(address: str, topic: str) -> tuple[int, int]:
    """(high watermark, last stable offset) of partition 1."""
    found = []
    with RawConnection(address) as conn:
        for isolation in (0, 1):
            request = dataclasses.replace(
                list_offsets_request(topic, partition=1), isolation_level=isolation
            )
            found.append(int(conn.request(request).topics[0].partitions[0].offset))
    return found[0], found[1]


def _leader_address(cluster: Cluster, topic: str, partition: int = 1) -> str:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    leader = admin.list_topics(topic, timeout=10).topics[topic].partitions[partition].leader
    broker = cluster.spec.broker(leader)
    return f"{broker.host}:{broker.port}"


@pytest.mark.parametrize(
    ("version", "refusal"), [(produce_v9, INVALID_TXN_STATE), (produce_v11, TRANSACTION_ABORTABLE)]
)
def test_a_late_transactional_write_is_refused(
    cluster: Cluster, topic: str, version: Any, refusal: int
) -> None:
    bootstrap = cluster.bootstrap_servers
    create_topic(bootstrap, topic, 2, 1)
    txn_id, producer_id, epoch = _committed_transaction(bootstrap, topic)
    assert _late_write(bootstrap, topic, txn_id, producer_id, epoch, version) == refusal
    high_watermark, last_stable = _offsets(bootstrap, topic)
    assert (high_watermark, last_stable) == (0, 0)


@pytest.mark.parametrize(
    ("version", "refusal"),
    [(txn_offset_commit_v3, INVALID_TXN_STATE), (txn_offset_commit_v4, TRANSACTION_ABORTABLE)],
)
def test_a_late_transactional_offset_commit_is_refused(
    cluster: Cluster, topic: str, version: Any, refusal: int
) -> None:
    """The group coordinator verifies its ``__consumer_offsets`` partition as a leader
    verifies a batch: offsets of a transaction that never added it (no AddOffsetsToTxn,
    here after the producer's transaction ended) are refused, not written where no marker
    would ever come."""
    bootstrap = cluster.bootstrap_servers
    create_topic(bootstrap, topic, 2, 1)
    txn_id, producer_id, epoch = _committed_transaction(bootstrap, topic)
    group = f"g-{topic}"
    with RawConnection(bootstrap) as conn:
        found = conn.request(FindCoordinatorRequest(key=group, key_type=0))
    request = version.TxnOffsetCommitRequest(
        transactional_id=txn_id,
        group_id=group,
        producer_id=producer_id,
        producer_epoch=epoch,
        topics=(
            version.TxnOffsetCommitRequestTopic(
                name=topic,
                partitions=(
                    version.TxnOffsetCommitRequestPartition(
                        partition_index=0, committed_offset=1, committed_metadata=None
                    ),
                ),
            ),
        ),
    )
    with RawConnection(f"{found.host}:{found.port}") as conn:
        response = conn.request(request)
    assert int(response.topics[0].partitions[0].error_code) == refusal
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        offsets = admin.list_group_offsets({group: None})[group]
    finally:
        admin.close()
    assert KTopicPartition(topic, 0) not in offsets


def test_the_leader_asks_a_coordinator_on_another_broker(cluster3: Cluster, topic: str) -> None:
    """The late write goes to a partition led by another broker than the coordinator (a
    topic of six partitions over three brokers has several)."""
    bootstrap = cluster3.bootstrap_servers
    create_topic(bootstrap, topic, 6, 3)
    txn_id, producer_id, epoch = _committed_transaction(bootstrap, topic)
    with RawConnection(bootstrap) as conn:
        coordinator = conn.request(FindCoordinatorRequest(key=txn_id, key_type=1))
    elsewhere = [
        (p, address)
        for p in range(1, 6)
        if (address := _leader_address(cluster3, topic, p))
        != f"{coordinator.host}:{coordinator.port}"
    ]
    assert elsewhere, "every partition is led by the coordinator's broker"
    partition, leader = elsewhere[0]
    code = _late_write(leader, topic, txn_id, producer_id, epoch, produce_v11, partition)
    assert code == TRANSACTION_ABORTABLE


def test_without_verification_the_late_write_hangs_the_partition(
    make_cluster3: Callable[..., Cluster], topic: str
) -> None:
    """The pre-KIP-890 path: the leader appends the batch, a transaction nobody knows of
    is open on partition 1, and its last stable offset stays behind the high watermark."""
    cluster = make_cluster3(**{"transaction.partition.verification.enable": "false"})
    bootstrap = cluster.bootstrap_servers
    create_topic(bootstrap, topic, 2, 3)
    txn_id, producer_id, epoch = _committed_transaction(bootstrap, topic)
    leader = _leader_address(cluster, topic)
    assert _late_write(leader, topic, txn_id, producer_id, epoch, produce_v11) == 0
    high_watermark = wait_for(lambda: _offsets(leader, topic)[0], what="the write replicated")
    assert (high_watermark, _offsets(leader, topic)[1]) == (1, 0)
