"""The transaction tooling of a real admin client, kafka-python's ``KafkaAdminClient``
(KIP-664, what ``kafka-transactions.sh`` does): ListTransactions on every broker,
DescribeTransactions at the coordinator, DescribeProducers at the leader, and an
administrative abort (WriteTxnMarkers) of a transaction left open on a partition.

confluent-kafka's Python ``AdminClient`` (2.16) has no call for any of these; the same
requests, sent raw, are checked field by field in ``test_transaction_errors``.
"""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Producer
from kafka import TopicPartition
from kafka.admin import AbortTransactionSpec, KafkaAdminClient, TransactionState
from kafka.errors import TransactionalIdNotFoundError

from kafkalite.cluster import Cluster
from tests.support.topics import create_topic
from tests.support.transactions import (
    confluent_read,
    coordinator_broker,
    wait_hosted,
    write_sentinels,
)
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]


def test_kafka_python_admin_lists_describes_and_aborts_an_open_transaction(
    cluster3: Cluster,
) -> None:
    bootstrap = cluster3.bootstrap_servers
    topic, txn_id = f"out-{uuid.uuid4().hex[:8]}", f"tx-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, 1, 3)
    wait_hosted(cluster3, topic)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"committed")
    producer.commit_transaction(30)  # offsets 0 and 1 (its marker)
    producer.begin_transaction()
    producer.produce(topic, b"left-open")
    assert producer.flush(30) == 0  # offset 2
    tp = TopicPartition(topic, 0)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        coordinator = coordinator_broker(cluster3, txn_id)
        listed = admin.list_transactions(state_filters=["Ongoing"])
        assert set(listed) == {1, 2, 3}  # every broker answers for its own partitions
        mine = [(b, t) for b, ts in listed.items() for t in ts if t.transactional_id == txn_id]
        assert [(b, t.state) for b, t in mine] == [(coordinator, TransactionState.ONGOING)]
        assert not any(
            t.transactional_id == txn_id
            for ts in admin.list_transactions(state_filters=["CompleteCommit"]).values()
            for t in ts
        )

        described = admin.describe_transactions([txn_id])[txn_id]
        assert described.coordinator_id == coordinator
        assert described.state == TransactionState.ONGOING
        assert described.producer_id == mine[0][1].producer_id
        assert described.topic_partitions == {tp}
        assert described.transaction_timeout_ms == 60_000  # librdkafka's transaction.timeout.ms
        assert described.transaction_start_time_ms > 0
        with pytest.raises(TransactionalIdNotFoundError):
            admin.describe_transactions([f"never-{txn_id}"])

        (active,) = admin.describe_producers([tp])[tp].active_producers
        assert (active.producer_id, active.producer_epoch) == (
            described.producer_id,
            described.producer_epoch,
        )
        assert active.current_transaction_start_offset == 2
        assert active.coordinator_epoch >= 0  # from the marker of the committed transaction

        # what an operator does with a transaction that hangs: abort it where it is open
        admin.abort_transaction(
            AbortTransactionSpec(
                tp, active.producer_id, active.producer_epoch, active.coordinator_epoch
            )
        )
        (after,) = admin.describe_producers([tp])[tp].active_producers
        assert after.current_transaction_start_offset == -1

        def stable() -> dict | None:
            found = [p for p in cluster3.status()["partitions"] if p["topic"] == topic]
            return found[0] if found and found[0]["last_stable_offset"] == 4 else None

        state = wait_for(stable, 30, "the LSO past the administrative abort marker")
        assert state["open_transactions"] == []
        assert [(t["first_offset"], t["last_offset"]) for t in state["aborted_transactions"]] == [
            (2, 3)
        ]
    finally:
        admin.close()
    producer.abort_transaction(30)  # the coordinator still had it open: it ends it too
    write_sentinels(bootstrap, topic, 1)
    assert confluent_read(bootstrap, topic, 1, "read_committed") == {0: [b"committed"]}
    assert confluent_read(bootstrap, topic, 1, "read_uncommitted") == {
        0: [b"committed", b"left-open"]
    }
