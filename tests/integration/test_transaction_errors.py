"""Misused transactions get Kafka's error codes - never a closed connection - and leave
the coordinator and the logs intact. Requests are sent raw (encoded by kio, not by the
broker's code) so that each case is exactly the one named; the real clients' view of the
same errors is in ``test_transactions``."""

from __future__ import annotations

import datetime
import struct
import time
import uuid
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from kafka import KafkaProducer
from kafka.errors import InvalidTransactionTimeoutError
from kafka.errors import KafkaError as KafkaPythonError
from kio.schema.add_partitions_to_txn.v3.request import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
)
from kio.schema.describe_producers.v0.request import DescribeProducersRequest, TopicRequest
from kio.schema.describe_transactions.v0.request import DescribeTransactionsRequest
from kio.schema.end_txn.v1.request import EndTxnRequest as EndTxnV1
from kio.schema.end_txn.v3.request import EndTxnRequest
from kio.schema.find_coordinator.v3.request import FindCoordinatorRequest
from kio.schema.init_producer_id.v4.request import InitProducerIdRequest
from kio.schema.list_transactions.v1.request import ListTransactionsRequest
from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData

from kafkalite.cluster import Cluster
from kafkalite.protocol.control_records import end_txn_marker_batch
from kafkalite.protocol.records import Record, build_batch
from tests.support.raw import RawConnection
from tests.support.topics import create_topic
from tests.support.transactions import (
    confluent_read,
    coordinator_broker,
    coordinator_of,
    create_led_topic,
    wait_hosted,
    write_sentinels,
)
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]

MINUTE = datetime.timedelta(minutes=1)
NONE, INVALID_REQUEST, UNKNOWN_TOPIC = 0, 42, 3
INVALID_PRODUCER_EPOCH, INVALID_PID_MAPPING, INVALID_TIMEOUT = 47, 49, 50
OPERATION_NOT_ATTEMPTED, INVALID_RECORD, PRODUCER_FENCED = 55, 87, 90
TRANSACTIONAL_ID_NOT_FOUND, CONCURRENT_TRANSACTIONS = 105, 51
NOT_COORDINATOR, INVALID_TXN_STATE = 16, 48


def init(conn: RawConnection, txn_id: str | None, timeout: datetime.timedelta = MINUTE, **kw):
    request = InitProducerIdRequest(
        transactional_id=txn_id,
        transaction_timeout=timeout,
        producer_id=kw.get("producer_id", -1),
        producer_epoch=kw.get("producer_epoch", -1),
    )
    deadline = time.monotonic() + 20
    while True:
        response = conn.request(request)
        if response.error_code != CONCURRENT_TRANSACTIONS or time.monotonic() > deadline:
            return response
        time.sleep(0.1)


def add_partitions(conn: RawConnection, txn_id: str, pid: int, epoch: int, topics: dict) -> dict:
    response = conn.request(
        AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=txn_id,
            v3_and_below_producer_id=pid,
            v3_and_below_producer_epoch=epoch,
            v3_and_below_topics=tuple(
                AddPartitionsToTxnTopic(name=t, partitions=tuple(ps)) for t, ps in topics.items()
            ),
        )
    )
    return {
        (t.name, p.partition_index): int(p.partition_error_code)
        for t in response.results_by_topic_v3_and_below
        for p in t.results_by_partition
    }


def describe(conn: RawConnection, txn_id: str) -> tuple[int, str]:
    """``(error code, state)`` of one DescribeTransactions v0 answer, read by hand: Kafka
    sends -1 as the start time of a transaction that has none, which kio's reader (a
    client's) refuses to decode, so only the leading fields are read::

        correlation_id int32 | header tags | throttle int32 | states: compact array
        state: error_code int16 | transactional_id compact string | state compact string
    """
    conn.send(DescribeTransactionsRequest(transactional_ids=(txn_id,)))
    frame = conn.read_frame()
    pos = 4 + 1 + 4  # correlation id, no tagged fields, throttle time
    count, pos = _uvarint(frame, pos)
    assert count - 1 == 1
    error = struct.unpack_from(">h", frame, pos)[0]
    length, pos = _uvarint(frame, pos + 2)
    length, pos = _uvarint(frame, pos + length - 1)
    return error, frame[pos : pos + length - 1].decode()


def _uvarint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def produce(conn: RawConnection, topic: str, batch: bytes) -> int:
    response = conn.request(
        ProduceRequest(
            transactional_id=None,
            acks=-1,
            timeout=datetime.timedelta(seconds=10),
            topic_data=(
                TopicProduceData(
                    name=topic, partition_data=(PartitionProduceData(index=0, records=batch),)
                ),
            ),
        )
    )
    return int(response.responses[0].partition_responses[0].error_code)


def leader_address(cluster: Cluster, topic: str) -> str:
    """Where to send a request for the topic's partition 0 (its leader's listener)."""
    status = cluster.status()
    leader = next(p["leader"] for p in status["partitions"] if p["topic"] == topic)
    return str(next(b["address"] for b in status["brokers"] if b["id"] == leader))


def fresh_ids() -> tuple[str, str]:
    return f"t-{uuid.uuid4().hex[:8]}", f"tx-{uuid.uuid4().hex[:8]}"


def test_commit_without_init_producer_id_and_from_a_fenced_epoch(cluster3: Cluster) -> None:
    _, txn_id = fresh_ids()
    with RawConnection(coordinator_of(cluster3.bootstrap_servers, txn_id)) as conn:
        never = EndTxnRequest(
            transactional_id=txn_id, producer_id=1, producer_epoch=0, committed=True
        )
        assert conn.request(never).error_code == INVALID_PID_MAPPING
        first = init(conn, txn_id)
        second = init(conn, txn_id)  # a new instance: the first is fenced
        assert (first.error_code, second.error_code) == (NONE, NONE)
        assert second.producer_epoch == first.producer_epoch + 1
        stale = dict(transactional_id=txn_id, producer_id=first.producer_id, committed=True)
        assert conn.request(
            EndTxnRequest(producer_epoch=first.producer_epoch, **stale)
        ).error_code == (PRODUCER_FENCED)
        # a client speaking EndTxn v1 predates PRODUCER_FENCED: it is told INVALID_PRODUCER_EPOCH
        assert conn.request(EndTxnV1(producer_epoch=first.producer_epoch, **stale)).error_code == (
            INVALID_PRODUCER_EPOCH
        )
        nothing_begun = EndTxnRequest(producer_epoch=second.producer_epoch, **stale)
        assert conn.request(nothing_begun).error_code == INVALID_TXN_STATE
        assert describe(conn, txn_id) == (NONE, "Empty")


def test_add_partitions_for_an_unknown_topic_adds_nothing(cluster3: Cluster) -> None:
    topic, txn_id = fresh_ids()
    create_topic(cluster3.bootstrap_servers, topic, 1, 3)
    wait_hosted(cluster3, topic)
    with RawConnection(coordinator_of(cluster3.bootstrap_servers, txn_id)) as conn:
        ids = init(conn, txn_id)
        errors = add_partitions(
            conn, txn_id, ids.producer_id, ids.producer_epoch, {topic: [0], "no-such-topic": [0]}
        )
        assert errors == {(topic, 0): OPERATION_NOT_ATTEMPTED, ("no-such-topic", 0): UNKNOWN_TOPIC}
        assert add_partitions(conn, txn_id, ids.producer_id, ids.producer_epoch, {topic: [7]}) == {
            (topic, 7): UNKNOWN_TOPIC
        }
        assert describe(conn, txn_id) == (NONE, "Empty")
        assert add_partitions(conn, txn_id, ids.producer_id, ids.producer_epoch, {topic: [0]}) == {
            (topic, 0): NONE
        }


def test_a_100_kb_transactional_id_is_refused_and_breaks_nothing(cluster3: Cluster) -> None:
    """Kafka's transaction log stores the id as an int16-length string: an id that cannot
    be stored is INVALID_REQUEST, on a connection that stays open."""
    bootstrap = cluster3.bootstrap_servers
    huge = "x" * 100_000
    with RawConnection(bootstrap) as conn:
        found = conn.request(FindCoordinatorRequest(key=huge, key_type=1))
        assert found.error_code == NONE
    with RawConnection(f"{found.host}:{found.port}") as conn:
        assert init(conn, huge).error_code == INVALID_REQUEST
        end = EndTxnRequest(transactional_id=huge, producer_id=1, producer_epoch=0, committed=True)
        assert conn.request(end).error_code == INVALID_REQUEST
        assert describe(conn, huge)[0] == TRANSACTIONAL_ID_NOT_FOUND
        listed = conn.request(
            ListTransactionsRequest(state_filters=(), producer_id_filters=(), duration_filter=-1)
        )
        assert huge not in {t.transactional_id for t in listed.transaction_states}
    topic, txn_id = fresh_ids()
    create_topic(bootstrap, topic, 1, 3)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"still works")
    producer.commit_transaction(30)
    write_sentinels(bootstrap, topic, 1)
    assert confluent_read(bootstrap, topic, 1, "read_committed") == {0: [b"still works"]}


def test_bad_timeouts_and_ids(cluster3: Cluster) -> None:
    _, txn_id = fresh_ids()
    with RawConnection(coordinator_of(cluster3.bootstrap_servers, txn_id)) as conn:
        too_long = datetime.timedelta(milliseconds=900_001)  # transaction.max.timeout.ms
        assert init(conn, txn_id, too_long).error_code == INVALID_TIMEOUT
        assert init(conn, txn_id, datetime.timedelta(0)).error_code == INVALID_TIMEOUT
        assert init(conn, "").error_code == INVALID_REQUEST
        assert describe(conn, txn_id)[0] == TRANSACTIONAL_ID_NOT_FOUND


def test_clients_cannot_write_markers(cluster3: Cluster) -> None:
    topic, _ = fresh_ids()
    create_topic(cluster3.bootstrap_servers, topic, 1, 1)
    wait_hosted(cluster3, topic)
    address = leader_address(cluster3, topic)
    with RawConnection(address) as conn:
        forged = end_txn_marker_batch(123, 0, 0, committed=True, timestamp_ms=0)
        assert produce(conn, topic, forged) == INVALID_RECORD
        assert produce(conn, topic, build_batch([Record(None, b"fine", 0)])) == NONE


def test_list_describe_and_describe_producers_show_an_open_transaction(cluster3: Cluster) -> None:
    bootstrap = cluster3.bootstrap_servers
    topic, txn_id = fresh_ids()
    create_topic(bootstrap, topic, 1, 3)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"open")
    producer.flush(30)
    with RawConnection(coordinator_of(bootstrap, txn_id)) as conn:
        listed = conn.request(
            ListTransactionsRequest(
                state_filters=("Ongoing", "NoSuchState"), producer_id_filters=(), duration_filter=-1
            )
        )
        assert listed.unknown_state_filters == ("NoSuchState",)
        mine = [t for t in listed.transaction_states if t.transactional_id == txn_id]
        assert [t.transaction_state for t in mine] == ["Ongoing"]
        (state,) = conn.request(
            DescribeTransactionsRequest(transactional_ids=(txn_id,))
        ).transaction_states
        assert (state.transaction_state, state.producer_id) == ("Ongoing", mine[0].producer_id)
        assert [(t.topic, tuple(t.partitions)) for t in state.topics] == [(topic, (0,))]
        assert state.transaction_timeout == datetime.timedelta(minutes=1)
    address = leader_address(cluster3, topic)
    with RawConnection(address) as conn:
        described = conn.request(
            DescribeProducersRequest(topics=(TopicRequest(name=topic, partition_indexes=(0,)),))
        )
        (active,) = described.topics[0].partitions[0].active_producers
        assert (active.producer_id, active.current_txn_start_offset) == (state.producer_id, 0)
    producer.abort_transaction(30)


def test_a_non_transactional_init_producer_id_never_fences_another_producer(
    cluster3: Cluster,
) -> None:
    """Issue 14 item 4: naming someone else's producer id and epoch gets a fresh id; the
    owner of that id goes on writing undisturbed."""
    topic, _ = fresh_ids()
    create_topic(cluster3.bootstrap_servers, topic, 1, 1)
    wait_hosted(cluster3, topic)
    address = leader_address(cluster3, topic)
    with RawConnection(address) as conn:
        owner = init(conn, None)
        intruder = init(
            conn, None, producer_id=owner.producer_id, producer_epoch=owner.producer_epoch
        )
        assert intruder.error_code == NONE
        assert intruder.producer_id != owner.producer_id and intruder.producer_epoch == 0
        for seq in range(3):
            batch = build_batch(
                [Record(None, b"owner-%d" % seq, 0)],
                producer_id=owner.producer_id,
                producer_epoch=owner.producer_epoch,
                base_sequence=seq,
            )
            assert produce(conn, topic, batch) == NONE


def test_a_transaction_past_its_timeout_is_aborted(cluster3: Cluster) -> None:
    bootstrap = cluster3.bootstrap_servers
    topic, txn_id = fresh_ids()
    create_topic(bootstrap, topic, 1, 3)
    producer = Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": txn_id, "transaction.timeout.ms": 2000}
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"stalled")
    producer.flush(30)
    wait_for(
        lambda: any(
            e["type"] == "txn_aborted" and e["transactional_id"] == txn_id
            for e in cluster3.events()
        ),
        30,
        "the coordinator to abort the stale transaction",
    )
    assert any(
        e["type"] == "txn_timed_out" and e["transactional_id"] == txn_id for e in cluster3.events()
    )
    with pytest.raises(KafkaException):
        producer.commit_transaction(30)
    write_sentinels(bootstrap, topic, 1)
    assert confluent_read(bootstrap, topic, 1, "read_committed") == {0: []}


def test_a_decided_transaction_refuses_what_would_change_it(make_cluster3: Any) -> None:
    """While PrepareCommit waits for its marker (the only replica of the partition is
    paused), the producer's next steps are CONCURRENT_TRANSACTIONS (retry later) and an
    abort is INVALID_TXN_STATE; another broker answers NOT_COORDINATOR. Once the marker is
    written the commit completes, and a repeated EndTxn(commit) is a successful retry."""
    cluster = make_cluster3()
    topic, txn_id = fresh_ids()
    coordinator = coordinator_broker(cluster, txn_id)
    leader, other = (b for b in (1, 2, 3) if b != coordinator)
    create_led_topic(cluster, topic, [leader], replication_factor=1)
    with RawConnection(cluster.status()["brokers"][other - 1]["address"]) as elsewhere:
        assert init(elsewhere, txn_id).error_code == NOT_COORDINATOR
    with RawConnection(coordinator_of(cluster.bootstrap_servers, txn_id)) as conn:
        ids = init(conn, txn_id)
        pid, epoch = ids.producer_id, ids.producer_epoch
        assert add_partitions(conn, txn_id, pid, epoch, {topic: [0]}) == {(topic, 0): NONE}
        cluster.pause(leader)
        try:
            end = dict(transactional_id=txn_id, producer_id=pid, producer_epoch=epoch)
            assert conn.request(EndTxnRequest(committed=True, **end)).error_code == NONE
            assert describe(conn, txn_id) == (NONE, "PrepareCommit")
            assert add_partitions(conn, txn_id, pid, epoch, {topic: [0]}) == {
                (topic, 0): CONCURRENT_TRANSACTIONS
            }
            assert conn.request(EndTxnRequest(committed=True, **end)).error_code == (
                CONCURRENT_TRANSACTIONS
            )
            assert conn.request(EndTxnRequest(committed=False, **end)).error_code == (
                INVALID_TXN_STATE
            )
            again = InitProducerIdRequest(
                transactional_id=txn_id,
                transaction_timeout=MINUTE,
                producer_id=-1,
                producer_epoch=-1,
            )
            assert conn.request(again).error_code == CONCURRENT_TRANSACTIONS
            (txn,) = [
                t for t in cluster.status()["transactions"] if t["transactional_id"] == txn_id
            ]
            assert txn["pending_markers"] == [f"{topic}-0"]
        finally:
            cluster.resume(leader)
        wait_for(
            lambda: describe(conn, txn_id) == (NONE, "CompleteCommit"),
            60,
            "the commit to complete once the marker is written",
        )
        assert conn.request(EndTxnRequest(committed=True, **end)).error_code == NONE
        assert init(conn, txn_id).producer_epoch == epoch + 1


def test_transaction_max_timeout_ms_bounds_what_producers_ask_for(make_cluster3: Any) -> None:
    cluster = make_cluster3(**{"transaction.max.timeout.ms": "20000"})
    bootstrap = cluster.bootstrap_servers
    _, txn_id = fresh_ids()
    greedy = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": txn_id,
            "transaction.timeout.ms": 30000,
        }
    )
    with pytest.raises(KafkaException) as refused:
        greedy.init_transactions(30)
    assert refused.value.args[0].code() == KafkaError.INVALID_TRANSACTION_TIMEOUT
    students = KafkaProducer(
        bootstrap_servers=bootstrap, transactional_id=txn_id, transaction_timeout_ms=30000
    )
    try:
        with pytest.raises(KafkaPythonError, match=InvalidTransactionTimeoutError.__name__):
            students.init_transactions()  # kafka-python wraps the broker's error 50
    finally:
        students.close(timeout=5)
    modest = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": txn_id,
            "transaction.timeout.ms": 20000,
        }
    )
    modest.init_transactions(30)
    with RawConnection(coordinator_of(bootstrap, txn_id)) as conn:
        assert init(conn, txn_id, datetime.timedelta(seconds=20)).error_code == NONE
        assert init(conn, txn_id, datetime.timedelta(milliseconds=20001)).error_code == (
            INVALID_TIMEOUT
        )
