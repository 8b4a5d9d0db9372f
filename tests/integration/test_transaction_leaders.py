"""Transactions across a change of partition leader, and a producer recovering its epoch.

- A follower replicates markers like any batch, so the replica that takes over after a
  kill -9 of the leader rebuilds the partition's transactions from its own log: the
  aborted index (read_committed readers still skip the aborted records) and the open
  transaction (the last stable offset stops at its first record until the commit marker,
  written to the new leader, moves it).
- KIP-360: a librdkafka transactional producer whose records timed out (their leader was
  paused) cannot know what the partition holds; it aborts and asks its coordinator to bump
  its epoch, keeping its producer id, and its next transaction works.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient, TransactionState

from kafkalite.cluster import Cluster
from tests.support.transactions import (
    confluent_read,
    coordinator_broker,
    create_led_topic,
    kafka_python_read,
    write_sentinels,
)
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]


def partition_state(cluster: Cluster, topic: str) -> dict[str, Any] | None:
    """Partition 0 as its leader reports it (None while no leader answers)."""
    found = [p for p in cluster.status()["partitions"] if p["topic"] == topic]
    return found[0] if found and found[0]["leader"] is not None else None


def read_committed_end(bootstrap: str, topic: str) -> int:
    """ListOffsets with read_committed (kafka-python): the last stable offset."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed")
    try:
        tp = TopicPartition(topic, 0)
        return int(consumer.end_offsets([tp])[tp])
    finally:
        consumer.close()


def test_a_new_leader_keeps_the_aborted_index_and_the_last_stable_offset(
    make_cluster3: Any,
) -> None:
    cluster = make_cluster3()
    bootstrap = cluster.bootstrap_servers
    topic, txn_id = f"out-{uuid.uuid4().hex[:8]}", f"tx-{uuid.uuid4().hex[:8]}"
    coordinator = coordinator_broker(cluster, txn_id)
    leader = next(b for b in (1, 2, 3) if b != coordinator)  # the coordinator survives
    create_led_topic(cluster, topic, [leader])
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"committed")
    producer.commit_transaction(30)
    producer.begin_transaction()
    producer.produce(topic, b"aborted")
    assert producer.flush(30) == 0
    producer.abort_transaction(30)
    producer.begin_transaction()  # offsets: 0 data 1 commit, 2 data 3 abort, 4 data (open)
    producer.produce(topic, b"open-at-failover")
    assert producer.flush(30) == 0
    wait_for(
        lambda: (
            (p := partition_state(cluster, topic))
            and p["high_watermark"] == 5
            and all(r["log_end_offset"] == 5 for r in p["replicas"])
        ),
        30,
        "every replica to hold the open transaction's record",
    )

    cluster.kill(leader)
    state = wait_for(
        lambda: (
            (p := partition_state(cluster, topic))
            and p["leader"] != leader
            and p["high_watermark"] == 5
            and p
        ),
        30,
        "a new leader with every record below its high watermark",
    )
    assert [(t["first_offset"], t["last_offset"]) for t in state["aborted_transactions"]] == [
        (2, 3)
    ]
    assert [t["first_offset"] for t in state["open_transactions"]] == [4]
    assert state["last_stable_offset"] == 4
    assert read_committed_end(bootstrap, topic) == 4

    producer.commit_transaction(60)  # the marker goes to the new leader
    wait_for(
        lambda: (
            (p := partition_state(cluster, topic))
            and p["last_stable_offset"] == 6
            and not p["open_transactions"]
        ),
        30,
        "the LSO past the commit marker on the new leader",
    )
    write_sentinels(bootstrap, topic, 1)
    expected = {0: [b"committed", b"open-at-failover"]}
    assert confluent_read(bootstrap, topic, 1, "read_committed") == expected
    assert kafka_python_read(bootstrap, topic, 1, "read_committed") == expected
    cluster.start(leader)  # the old leader follows and agrees
    wait_for(
        lambda: (
            (p := partition_state(cluster, topic))
            and len({r["log_end_offset"] for r in p["replicas"]}) == 1
        ),
        60,
        "the restarted replica to catch up",
    )


def test_kip_360_librdkafka_bumps_its_epoch_after_records_time_out(make_cluster3: Any) -> None:
    cluster = make_cluster3()
    bootstrap = cluster.bootstrap_servers
    topic, txn_id = f"out-{uuid.uuid4().hex[:8]}", f"tx-{uuid.uuid4().hex[:8]}"
    coordinator = coordinator_broker(cluster, txn_id)
    leader = next(b for b in (1, 2, 3) if b != coordinator)  # paused; the coordinator is not
    create_led_topic(cluster, topic, [leader])
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": txn_id,
            "message.timeout.ms": 3000,
            "request.timeout.ms": 2000,
        }
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"committed")
    producer.commit_transaction(30)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        # commit_transaction returns once PrepareCommit is written; its marker may still be
        # on its way to the leader. Paused before it lands, the first transaction would stay
        # in PrepareCommit, and the abort below be refused (INVALID_TXN_STATE, as Kafka does).
        before = wait_for(
            lambda: (
                (d := admin.describe_transactions([txn_id])[txn_id]).state
                == TransactionState.COMPLETE_COMMIT
                and d
            ),
            30,
            "the first transaction's commit marker written",
        )
        producer.begin_transaction()
        cluster.pause(leader)
        producer.produce(topic, b"timed-out")
        producer.flush(30)  # the record times out: delivered or not, nobody knows
        with pytest.raises(KafkaException) as failed:
            producer.commit_transaction(30)
        error: KafkaError = failed.value.args[0]
        assert error.txn_requires_abort() and not error.fatal()
        cluster.resume(leader)
        wait_for(lambda: partition_state(cluster, topic), 30, "the leader answering again")
        producer.abort_transaction(60)  # aborts, then InitProducerId(producer id, epoch)
        after = admin.describe_transactions([txn_id])[txn_id]
    finally:
        admin.close()
    assert after.producer_id == before.producer_id
    assert after.producer_epoch == before.producer_epoch + 1
    assert not any(
        e["type"] == "producer_fenced" and e["transactional_id"] == txn_id for e in cluster.events()
    )  # a bump the producer asked for fences no one
    producer.begin_transaction()
    producer.produce(topic, b"next")
    producer.commit_transaction(60)
    write_sentinels(bootstrap, topic, 1)
    assert confluent_read(bootstrap, topic, 1, "read_committed") == {0: [b"committed", b"next"]}
