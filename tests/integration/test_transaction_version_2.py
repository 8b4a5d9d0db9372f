"""Transaction version 2 (KIP-890 part 2) on the wire: Produce v12, TxnOffsetCommit v5,
EndTxn v5. No Python client speaks it yet (kafka-python 3.0 stops at EndTxn v3 and Produce
v9; librdkafka 2.16 sends EndTxn v1, AddPartitionsToTxn v0 and Produce v10; aiokafka 0.14
EndTxn v0), so a producer of version 2 is played here with raw requests encoded by kio,
as Kafka 4.0's Java producer sends them: no AddPartitionsToTxn and
no AddOffsetsToTxn (the partition's leader and the group coordinator add their partitions
to the transaction), and the epoch EndTxn answers is the one the next transaction uses.

What it buys: the producer epoch moves on at every transaction's end, so a write of the
ended transaction's epoch - a retry held up on the network, a zombie - is fenced on every
partition instead of opening a transaction nobody will end. Real clients read what it
wrote, and a producer of version 1 can take its transactional id over.
"""

from __future__ import annotations

import dataclasses
import datetime
import uuid
from typing import Any

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka import TopicPartition as KTopicPartition
from kio.schema.end_txn.v5 import request as end_txn
from kio.schema.find_coordinator.v3.request import FindCoordinatorRequest
from kio.schema.init_producer_id.v5 import request as init_producer_id
from kio.schema.produce.v11 import request as produce_v11
from kio.schema.produce.v12 import request as produce_v12
from kio.schema.txn_offset_commit.v5 import request as txn_offset_commit

from kafkalite.cluster import Cluster
from kafkalite.protocol.records import Record, build_batch
from tests.support.raw import RawConnection, list_offsets_request
from tests.support.topics import create_topic
from tests.support.transactions import confluent_read, kafka_python_read, write_sentinels
from tests.support.waiting import wait_for

pytestmark = pytest.mark.interop

INVALID_PRODUCER_EPOCH = 47
CONCURRENT_TRANSACTIONS = 51
"""The producer's previous transaction is still writing its markers: retried."""


@dataclasses.dataclass
class Version2Producer:
    """A transactional producer of transaction version 2, one raw request at a time."""

    cluster: Cluster
    transactional_id: str
    producer_id: int = -1
    producer_epoch: int = -1

    def _coordinator(self, key: str, key_type: int) -> str:
        with RawConnection(self.cluster.bootstrap_servers) as conn:
            found = conn.request(FindCoordinatorRequest(key=key, key_type=key_type))
        return f"{found.host}:{found.port}"

    def _ask(self, address: str, request: Any) -> Any:
        with RawConnection(address) as conn:
            return conn.request(request)

    def init(self) -> None:
        answer = self._ask(
            self._coordinator(self.transactional_id, 1),
            init_producer_id.InitProducerIdRequest(
                transactional_id=self.transactional_id,
                transaction_timeout=datetime.timedelta(seconds=60),
            ),
        )
        assert answer.error_code == 0
        self.producer_id, self.producer_epoch = int(answer.producer_id), answer.producer_epoch

    def send(
        self,
        topic: str,
        partition: int,
        value: bytes,
        epoch: int | None = None,
        version: Any = None,
    ) -> int:
        """A transactional batch (first of its epoch on the partition: sequence 0) to the
        partition's leader; its error code, once the leader stops answering
        CONCURRENT_TRANSACTIONS (the last transaction's markers still being written)."""
        version = version or produce_v12
        batch = build_batch(
            [Record(None, value, int(datetime.datetime.now().timestamp() * 1000))],
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch if epoch is None else epoch,
            base_sequence=0,
            transactional=True,
        )
        request = version.ProduceRequest(
            transactional_id=self.transactional_id,
            acks=-1,
            timeout=datetime.timedelta(seconds=10),
            topic_data=(
                version.TopicProduceData(
                    name=topic,
                    partition_data=(version.PartitionProduceData(index=partition, records=batch),),
                ),
            ),
        )
        leader = leader_address(self.cluster, topic, partition)

        def answer() -> int:
            response = self._ask(leader, request)
            return int(response.responses[0].partition_responses[0].error_code)

        code = wait_for(
            lambda: (c := answer()) != CONCURRENT_TRANSACTIONS and c + 1, what="an answer"
        )
        return code - 1

    def commit_offsets(self, group: str, topic: str, partition: int, offset: int) -> int:
        request = txn_offset_commit.TxnOffsetCommitRequest(
            transactional_id=self.transactional_id,
            group_id=group,
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            topics=(
                txn_offset_commit.TxnOffsetCommitRequestTopic(
                    name=topic,
                    partitions=(
                        txn_offset_commit.TxnOffsetCommitRequestPartition(
                            partition_index=partition,
                            committed_offset=offset,
                            committed_metadata=None,
                        ),
                    ),
                ),
            ),
        )
        response = self._ask(self._coordinator(group, 0), request)
        return int(response.topics[0].partitions[0].error_code)

    def end(self, commit: bool, epoch: int | None = None) -> tuple[int, int, int]:
        """EndTxn v5: (error, producer id, epoch) - the producer goes on with those."""
        answer = self._ask(
            self._coordinator(self.transactional_id, 1),
            end_txn.EndTxnRequest(
                transactional_id=self.transactional_id,
                producer_id=self.producer_id,
                producer_epoch=self.producer_epoch if epoch is None else epoch,
                committed=commit,
            ),
        )
        return int(answer.error_code), int(answer.producer_id), int(answer.producer_epoch)


def leader_address(cluster: Cluster, topic: str, partition: int) -> str:
    leader = next(
        p["leader"]
        for p in cluster.status()["partitions"]
        if p["topic"] == topic and p["partition"] == partition
    )
    broker = cluster.spec.broker(leader)
    return f"{broker.host}:{broker.port}"


def offsets(cluster: Cluster, topic: str, partition: int) -> tuple[int, int]:
    """(high watermark, last stable offset) at the partition's leader."""
    found = []
    with RawConnection(leader_address(cluster, topic, partition)) as conn:
        for isolation in (0, 1):
            request = dataclasses.replace(
                list_offsets_request(topic, partition=partition), isolation_level=isolation
            )
            found.append(int(conn.request(request).topics[0].partitions[0].offset))
    return found[0], found[1]


def committed(cluster: Cluster, group: str, topic: str) -> int:
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        found = admin.list_group_offsets({group: None})[group]
    finally:
        admin.close()
    entry = found.get(KTopicPartition(topic, 0))
    return -1 if entry is None else int(entry.offset)


def test_the_epoch_moves_on_at_each_end_and_fences_the_ended_transactions_writes(
    cluster: Cluster, topic: str
) -> None:
    create_topic(cluster.bootstrap_servers, topic, 2, 1)
    group = f"g-{topic}"
    producer = Version2Producer(cluster, f"tv2-{uuid.uuid4().hex[:8]}")
    producer.init()
    pid, epoch = producer.producer_id, producer.producer_epoch

    # no AddPartitionsToTxn, no AddOffsetsToTxn: the leader and the group coordinator add
    assert producer.send(topic, 0, b"a") == 0
    assert producer.commit_offsets(group, topic, 0, 1) == 0
    assert producer.end(commit=True) == (0, pid, epoch + 1)
    wait_for(lambda: offsets(cluster, topic, 0) == (2, 2), what="the commit marker")
    wait_for(lambda: committed(cluster, group, topic) == 1, what="the offsets to count")

    # a write of the ended transaction's epoch, on a partition it never touched: fenced
    # (Produce v12 and v11 alike), and nothing hangs there
    for version in (produce_v12, produce_v11):
        assert producer.send(topic, 1, b"late", epoch, version) == INVALID_PRODUCER_EPOCH
    assert offsets(cluster, topic, 1) == (0, 0)

    # the next transaction runs at the epoch EndTxn gave; an abort bumps it again
    producer.producer_epoch = epoch + 1
    assert producer.send(topic, 1, b"b") == 0
    # on partition 0 the commit marker already carries this epoch: the batch starts anew
    # at sequence 0 under it, and the partition adds it to the new transaction
    assert producer.send(topic, 0, b"b0") == 0
    assert producer.end(commit=False) == (0, pid, epoch + 2)
    assert producer.end(commit=False, epoch=epoch + 1) == (0, pid, epoch + 2)  # a retry
    wait_for(lambda: offsets(cluster, topic, 1) == (2, 2), what="the abort marker")

    # the same transactional id, taken over by a producer of version 1 (kafka-python: EndTxn
    # v3, Produce v9, its partitions added by AddPartitionsToTxn): it fences the version 2
    # producer's epoch and runs its transaction the old way
    successor = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers, transactional_id=producer.transactional_id
    )
    try:
        successor.init_transactions()
        successor.begin_transaction()
        successor.send(topic, b"c", partition=1).get(timeout=30)
        successor.commit_transaction()
    finally:
        successor.close()
    producer.producer_epoch = epoch + 2
    assert producer.send(topic, 0, b"zombie") == INVALID_PRODUCER_EPOCH

    # what real consumers read of it: the markers written with the bumped epochs count
    write_sentinels(cluster.bootstrap_servers, topic, 2)
    for read in (confluent_read, kafka_python_read):
        committed_only = read(cluster.bootstrap_servers, topic, 2, "read_committed")
        assert committed_only == {0: [b"a"], 1: [b"c"]}, read.__name__
        everything = read(cluster.bootstrap_servers, topic, 2, "read_uncommitted")
        assert everything == {0: [b"a", b"b0"], 1: [b"b", b"c"]}, read.__name__


def test_leaders_and_the_group_coordinator_add_through_another_brokers_coordinator(
    cluster3: Cluster, topic: str
) -> None:
    """Three brokers: the partitions written are led by brokers other than the one
    coordinating the transactional id, so the leaders add them over the network
    (AddPartitionsToTxn v5 with verify_only false)."""
    create_topic(cluster3.bootstrap_servers, topic, 6, 3)
    producer = Version2Producer(cluster3, f"tv2-{uuid.uuid4().hex[:8]}")
    producer.init()
    coordinator = producer._coordinator(producer.transactional_id, 1)
    elsewhere = [p for p in range(6) if leader_address(cluster3, topic, p) != coordinator]
    assert elsewhere, "every partition is led by the coordinator's broker"
    for p in elsewhere:
        assert producer.send(topic, p, b"x") == 0
    assert producer.commit_offsets(f"g-{topic}", topic, 0, 1) == 0
    error, _, bumped = producer.end(commit=True)
    assert (error, bumped) == (0, producer.producer_epoch + 1)
    for p in elsewhere:
        wait_for(lambda p=p: offsets(cluster3, topic, p) == (2, 2), what=f"{topic}-{p} marker")
