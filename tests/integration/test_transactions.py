"""Transactions with the real clients: kafka-python's and confluent-kafka's transactional
producers (commit, abort, send_offsets_to_transaction, a zombie fenced), read_committed
vs read_uncommitted consumers of both libraries, and kcat under read_committed, against
a real three-broker cluster (RF 3)."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import uuid

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka import TopicPartition as AIOTopicPartition
from confluent_kafka import KafkaException, Producer
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError as KafkaPythonError
from kafka.structs import OffsetAndMetadata

from kafkalite.cluster import Cluster
from tests.support.topics import create_topic
from tests.support.transactions import (
    SENTINEL,
    confluent_read,
    kafka_python_read,
    write_sentinels,
)
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def at(topic: str, offset: int) -> dict[TopicPartition, OffsetAndMetadata]:
    return {TopicPartition(topic, 0): OffsetAndMetadata(offset, "", -1)}


def txn_producer(bootstrap: str, txn_id: str, **config: object) -> Producer:
    producer = Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5, **config}
    )
    producer.init_transactions(30)
    return producer


def test_confluent_commit_and_abort_seen_by_both_consumers(cluster3: Cluster) -> None:
    bootstrap = cluster3.bootstrap_servers
    topic = name("out")
    create_topic(bootstrap, topic, 2, 3)
    producer = txn_producer(bootstrap, name("tx"))
    producer.begin_transaction()
    for i in range(6):
        producer.produce(topic, b"committed-%d" % i, partition=i % 2)
    producer.commit_transaction(30)
    producer.begin_transaction()
    for i in range(4):
        producer.produce(topic, b"aborted-%d" % i, partition=i % 2)
    producer.flush(30)  # in the log of both partitions, then aborted
    producer.abort_transaction(30)
    producer.begin_transaction()
    producer.produce(topic, b"committed-last", partition=1)
    producer.commit_transaction(30)
    write_sentinels(bootstrap, topic, 2)

    committed = {0: [b"committed-0", b"committed-2", b"committed-4"]}
    committed[1] = [b"committed-1", b"committed-3", b"committed-5", b"committed-last"]
    everything = {
        0: [*committed[0], b"aborted-0", b"aborted-2"],
        1: [*committed[1][:3], b"aborted-1", b"aborted-3", b"committed-last"],
    }
    for read in (confluent_read, kafka_python_read):
        assert read(bootstrap, topic, 2, "read_committed") == committed
        assert read(bootstrap, topic, 2, "read_uncommitted") == everything


def test_kafka_python_commit_abort_and_offsets_in_the_transaction(cluster3: Cluster) -> None:
    """send_offsets_to_transaction: the group's offset moves only when the transaction
    commits; an aborted transaction's offsets never count."""
    bootstrap = cluster3.bootstrap_servers
    source, sink, group = name("in"), name("out"), name("group")
    create_topic(bootstrap, source, 1, 3)
    create_topic(bootstrap, sink, 1, 3)
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=name("tx"))
    producer.init_transactions()
    producer.begin_transaction()
    for i in range(3):
        producer.send(sink, b"kept-%d" % i)
    producer.send_offsets_to_transaction(
        {TopicPartition(source, 0): OffsetAndMetadata(3, "", -1)}, group
    )
    producer.commit_transaction()
    producer.begin_transaction()
    producer.send(sink, b"dropped")
    producer.send_offsets_to_transaction(
        {TopicPartition(source, 0): OffsetAndMetadata(99, "", -1)}, group
    )
    producer.flush()
    producer.abort_transaction()
    producer.close()
    write_sentinels(bootstrap, sink, 1)

    assert kafka_python_read(bootstrap, sink, 1, "read_committed") == {
        0: [b"kept-0", b"kept-1", b"kept-2"]
    }
    assert confluent_read(bootstrap, sink, 1, "read_uncommitted")[0][-1] == b"dropped"
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    assert consumer.committed(TopicPartition(source, 0)) == 3
    consumer.close()


@pytest.mark.parametrize("library", ["kafka-python", "confluent-kafka"])
def test_a_zombie_with_the_same_transactional_id_is_fenced(cluster3: Cluster, library: str) -> None:
    bootstrap = cluster3.bootstrap_servers
    topic, txn_id = name("out"), name("tx")
    create_topic(bootstrap, topic, 1, 3)
    if library == "kafka-python":
        zombie = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id)
        zombie.init_transactions()
        zombie.begin_transaction()
        zombie.send(topic, b"zombie-open").get(30)
        successor = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id)
        successor.init_transactions()  # aborts the zombie's open transaction
        with pytest.raises(KafkaPythonError):
            zombie.send(topic, b"zombie-late").get(30)
            zombie.commit_transaction()
        successor.begin_transaction()
        successor.send(topic, b"successor")
        successor.commit_transaction()
        successor.close()
    else:
        zombie = txn_producer(bootstrap, txn_id)
        zombie.begin_transaction()
        zombie.produce(topic, b"zombie-open")
        zombie.flush(30)
        successor = txn_producer(bootstrap, txn_id)
        with pytest.raises(KafkaException) as fenced:
            zombie.produce(topic, b"zombie-late")
            zombie.commit_transaction(30)
        assert fenced.value.args[0].fatal()
        successor.begin_transaction()
        successor.produce(topic, b"successor")
        successor.commit_transaction(30)
    write_sentinels(bootstrap, topic, 1)
    assert confluent_read(bootstrap, topic, 1, "read_committed") == {0: [b"successor"]}
    events = cluster3.events()
    assert any(e["type"] == "producer_fenced" and e["transactional_id"] == txn_id for e in events)


def test_an_open_transaction_holds_back_read_committed_readers(cluster3: Cluster) -> None:
    """While a transaction is open, the last stable offset stays at its first record:
    ListOffsets read_committed answers it, a read_committed consumer stops there, and
    ``status`` shows the open transaction on the partition."""
    bootstrap = cluster3.bootstrap_servers
    topic = name("out")
    create_topic(bootstrap, topic, 1, 3)
    plain = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    plain.produce(topic, b"before")
    plain.flush(30)
    producer = txn_producer(bootstrap, name("tx"))
    producer.begin_transaction()
    producer.produce(topic, b"open-1")
    producer.produce(topic, b"open-2")
    producer.flush(30)
    plain.produce(topic, b"after-but-not-yet-stable")
    plain.flush(30)

    def partition(high_watermark: int) -> dict | None:
        found = [p for p in cluster3.status()["partitions"] if p["topic"] == topic]
        return found[0] if found and found[0]["high_watermark"] == high_watermark else None

    state = wait_for(lambda: partition(4), 30, "the HW to pass every record")
    assert state["last_stable_offset"] == 1
    assert [t["first_offset"] for t in state["open_transactions"]] == [1]
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed")
    tp = TopicPartition(topic, 0)
    assert consumer.end_offsets([tp]) == {tp: 1}
    consumer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_uncommitted")
    assert consumer.end_offsets([tp]) == {tp: 4}
    consumer.close()

    producer.commit_transaction(30)
    wait_for(
        lambda: (p := partition(5)) and p["last_stable_offset"] == 5 and not p["open_transactions"],
        30,
        "the LSO past the commit marker",
    )
    write_sentinels(bootstrap, topic, 1)
    assert kafka_python_read(bootstrap, topic, 1, "read_committed") == {
        0: [b"before", b"open-1", b"open-2", b"after-but-not-yet-stable"]
    }


def test_aborted_transactions_are_listed_in_status(cluster3: Cluster) -> None:
    bootstrap = cluster3.bootstrap_servers
    topic, txn_id = name("out"), name("tx")
    create_topic(bootstrap, topic, 1, 3)
    producer = txn_producer(bootstrap, txn_id)
    producer.begin_transaction()
    producer.produce(topic, b"x")
    producer.flush(30)
    producer.abort_transaction(30)

    def ended() -> tuple[list, dict] | None:
        """The aborted index entry (written with the leader's abort marker) and the
        coordinator's CompleteAbort (written only after every marker is), in one snapshot:
        between the two the coordinator still rightly reports PrepareAbort."""
        status = cluster3.status()
        aborted = [
            p["aborted_transactions"]
            for p in status["partitions"]
            if p["topic"] == topic and p["aborted_transactions"]
        ]
        txn = next((t for t in status["transactions"] if t["transactional_id"] == txn_id), None)
        if not aborted or txn is None or txn["state"] != "CompleteAbort":
            return None
        return aborted[0], txn

    (entry,), transaction = wait_for(ended, 30, "the aborted transaction and CompleteAbort")
    assert (entry["first_offset"], entry["last_offset"]) == (0, 1)
    assert transaction["producer_id"] == entry["producer_id"]


@pytest.mark.skipif(
    shutil.which("kcat") is None,
    reason="kcat not installed (scripts/install-system-deps.sh installs it as root)",
)
def test_kcat_reads_committed_data_only(cluster3: Cluster) -> None:
    bootstrap = cluster3.bootstrap_servers
    topic = name("out")
    create_topic(bootstrap, topic, 1, 3)
    producer = txn_producer(bootstrap, name("tx"))
    for outcome in ("commit", "abort", "commit"):
        producer.begin_transaction()
        producer.produce(topic, f"{outcome}-a".encode())
        producer.produce(topic, f"{outcome}-b".encode())
        producer.flush(30)
        if outcome == "commit":
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)
    write_sentinels(bootstrap, topic, 1)

    def kcat(isolation: str) -> list[str]:
        out = subprocess.run(
            [
                *("kcat", "-b", bootstrap, "-C", "-t", topic, "-o", "beginning", "-e", "-q"),
                *("-X", f"isolation.level={isolation}", "-f", "%s\n"),
            ],
            check=True,
            timeout=60,
            capture_output=True,
        ).stdout.decode()
        return out.splitlines()

    assert kcat("read_committed") == ["commit-a", "commit-b"] * 2 + ["__end__"]
    assert kcat("read_uncommitted") == [
        "commit-a",
        "commit-b",
        "abort-a",
        "abort-b",
        "commit-a",
        "commit-b",
        "__end__",
    ]


def test_aborted_and_open_transactions_survive_kill_9(fresh_cluster: Cluster) -> None:
    """After kill -9 and a restart (log recovery), read_committed readers still skip the
    aborted transactions (from the ``.txnindex`` files), a transaction left open still holds
    the LSO back, and the restarted coordinator aborts it when its producer is replaced."""
    bootstrap = fresh_cluster.bootstrap_servers
    topic, txn_id = name("out"), name("tx")
    create_topic(bootstrap, topic, 1, 1)
    producer = txn_producer(bootstrap, txn_id)
    for outcome in ("abort", "commit", "abort"):
        producer.begin_transaction()
        producer.produce(topic, outcome.encode())
        producer.flush(30)
        if outcome == "commit":
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)
    producer.begin_transaction()
    producer.produce(topic, b"left-open")
    producer.flush(30)
    fresh_cluster.kill(1)
    fresh_cluster.start(1)

    def topic_state() -> dict | None:
        found = [p for p in fresh_cluster.status()["partitions"] if p["topic"] == topic]
        return found[0] if found and found[0]["leader"] is not None else None

    state = wait_for(topic_state, 30, "the partition back")
    assert [t["last_offset"] for t in state["aborted_transactions"]] == [1, 5]
    assert [t["first_offset"] for t in state["open_transactions"]] == [6]
    assert state["last_stable_offset"] <= 6
    successor = txn_producer(bootstrap, txn_id)  # fences the old producer, aborts its txn
    successor.begin_transaction()
    successor.produce(topic, b"after-restart")
    successor.commit_transaction(30)
    write_sentinels(bootstrap, topic, 1)
    assert confluent_read(bootstrap, topic, 1, "read_committed") == {
        0: [b"commit", b"after-restart"]
    }
    assert kafka_python_read(bootstrap, topic, 1, "read_committed") == {
        0: [b"commit", b"after-restart"]
    }


def test_aiokafka_transactions_and_read_committed(cluster3: Cluster) -> None:
    """aiokafka speaks the oldest versions of the transaction APIs (v0)."""
    bootstrap = cluster3.bootstrap_servers
    topic = name("out")
    create_topic(bootstrap, topic, 1, 3)

    async def scenario() -> list[bytes]:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=name("tx"))
        await producer.start()
        try:
            async with producer.transaction():
                await producer.send_and_wait(topic, b"kept", partition=0)
            await producer.begin_transaction()
            await producer.send_and_wait(topic, b"dropped", partition=0)
            await producer.abort_transaction()
        finally:
            await producer.stop()
        write_sentinels(bootstrap, topic, 1)
        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap,
            isolation_level="read_committed",
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        await consumer.start()
        consumer.assign([AIOTopicPartition(topic, 0)])
        seen: list[bytes] = []
        try:
            async with asyncio.timeout(30):
                while SENTINEL not in seen:
                    batches = await consumer.getmany(timeout_ms=500)
                    seen.extend(m.value for records in batches.values() for m in records)
        finally:
            await consumer.stop()
        return seen

    assert asyncio.run(scenario()) == [b"kept", SENTINEL]
