"""The notebook API against a real three-broker cluster: kafka-python clients that record a
history the checker agrees with, group lag, fault windows, and a reset that brings every
broker back."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import KafkaTimeoutError, NotEnoughReplicasError

import kafkalite.lab
from kafkalite.cluster import Cluster, ClusterError
from kafkalite.lab.connection import ENV_DIR, open_cluster
from kafkalite.lab.lab import fenced_by_all
from kafkalite.lab.recording import FINAL_LOG_CONSUMER
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.labs, pytest.mark.slow]


def test_clients_record_a_history_the_checker_finds_clean(
    make_cluster3: Callable[..., Cluster], monkeypatch
) -> None:
    cluster = make_cluster3()
    monkeypatch.setenv(ENV_DIR, cluster.spec.root)
    lab = kafkalite.lab.connect()
    try:
        assert lab.bootstrap_servers == cluster.bootstrap_servers
        lab.create_topic("orders", 2, 3, {"min.insync.replicas": "2"})
        assert lab.topic_config("orders")["min.insync.replicas"] == "2"
        producer = lab.producer(acks="all")
        assert isinstance(producer, KafkaProducer)
        for i in range(20):
            producer.send("orders", f"order-{i}".encode(), partition=i % 2)
        producer.flush(30)
        consumer = lab.consumer(group_id="billing")
        assert isinstance(consumer, KafkaConsumer)
        consumer.subscribe(["orders"])
        records = []
        for record in consumer:
            records.append(record)
            if len(records) == 15:
                break
        consumer.commit()
        assert lab.history.summary() == {"send": 20, "ack": 20, "error": 0, "read": 15, "commit": 2}
        result = lab.check()
        assert result.valid, result
        groups = lab.groups().set_index(["group", "partition"])
        assert groups.loc[("billing", 0), "lag"] + groups.loc[("billing", 1), "lag"] == 5
        replicas = lab.replicas("orders")
        assert len(replicas) == 6 and replicas["in_isr"].all()
        assert set(replicas.groupby("partition")["log_end_offset"].max()) == {10}
        # the same history checked against the consumer's output: 5 records never processed
        output = [r.value for r in records]
        assert lab.check(output=output).counts["lost"] == 5
    finally:
        lab.close()


def test_fault_windows_and_reset_bring_every_broker_back(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    lab = kafkalite.lab.connect(cluster.spec.root)
    try:
        lab.create_topic("pay", 1, 3, replicas=[[2, 3, 1]])
        assert lab.leader("pay", 0) == 2
        lab.kill(2)
        assert lab.wait_for_leader("pay", 0, other_than=2) in (1, 3)
        lab.pause(3)
        lab.isolate(1)
        assert {w.label for w in lab.cluster.faults.windows} == {"kill 2", "pause 3", "isolate 1"}
        lab.reset()
        assert all(w.end is not None for w in lab.cluster.faults.windows)
        assert set(lab.brokers()["state"]) == {"running"}
        assert lab.wait_for_isr("pay", 0) and len(lab.partitions("pay").loc[0, "isr"]) == 3
        with pytest.raises(KeyError, match="no partition pay-7"):
            lab.leader("pay", 7)
    finally:
        lab.close()


def test_a_restarted_preferred_replica_gets_its_leadership_back(
    make_cluster3: Callable[..., Cluster],
) -> None:
    """Lab 03 failed once in a CI run so: the controller handed a partition back to broker
    1 between two writes of a step, and a producer that does not retry was answered
    NOT_LEADER_OR_FOLLOWER. The step now waits for the preferred leader first."""
    cluster = make_cluster3()
    lab = kafkalite.lab.connect(cluster.spec.root)
    try:
        lab.create_topic("pay", 1, 3, replicas=[[1, 2, 3]])
        lab.create_topic("solo", 1, 1, replicas=[[1]])
        lab.kill(1)
        assert lab.wait_for_leader("pay", other_than=1) in (2, 3)
        comeback = threading.Timer(1.0, lab.start, (1,))
        comeback.start()
        try:
            assert lab.wait_for_preferred_leader("solo") == 1  # no leader at all, meanwhile
        finally:
            comeback.join()
        lab.wait_for_isr("pay", size=3)
        assert lab.wait_for_preferred_leader("pay") == 1
        assert lab.leader("pay") == 1
        lab.set_config("pay", {"min.insync.replicas": "3"})
        lab.stop(3)
        lab.wait_for_isr("pay", size=2)
        refused = lab.producer(acks="all", retries=0).send("pay", b"x")
        with pytest.raises(NotEnoughReplicasError):
            refused.get(timeout=10)
    finally:
        lab.close()


def test_a_stopped_lab_cluster_starts_again_on_its_ports_with_its_id(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    root = cluster.spec.root
    cluster.down()
    again = open_cluster(Path(root))
    try:
        assert again.bootstrap_servers == cluster.bootstrap_servers
        assert again.spec.cluster_id == cluster.spec.cluster_id
        assert {s.value for s in again.broker_states().values()} == {"running"}
        with pytest.raises(ClusterError, match="already running"):
            again.start(1)
    finally:
        again.down()


def test_the_final_log_reader_follows_a_leader_that_moved_after_it_looked(
    make_cluster3: Callable[..., Cluster],
) -> None:
    """kafka-python 3.0.12 asks the broker its metadata names as leader again and again
    when that broker answers ListOffsets with NOT_LEADER_OR_FOLLOWER, without refreshing
    its metadata: with the default five-minute metadata age, ``end_offsets`` times out
    (lab 04's check failed so, 30 s after a split brain, in the CI). The final-log reader's
    settings refresh it within a second. Here leadership moves from broker 1, alive, to
    broker 2 after both consumers looked it up."""
    cluster = make_cluster3(**{"auto.leader.rebalance.enable": "false"})
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    tp = TopicPartition("moved", 0)
    try:
        admin.create_topics([NewTopic("moved", -1, -1, replica_assignments={0: [1, 2, 3]})])
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
        for i in range(5):
            producer.send("moved", str(i).encode()).get(30)
        producer.close()
        reader = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, **FINAL_LOG_CONSUMER)
        plain = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers)
        assert reader.end_offsets([tp]) == plain.end_offsets([tp]) == {tp: 5}
        admin.alter_partition_reassignments({tp: [2, 1, 3]})
        admin.elect_leaders(0, {"moved": [0]})
        wait_for(lambda: leader_of(cluster, "moved") == 2, what="broker 2 leads moved-0")
        with pytest.raises(KafkaTimeoutError):
            plain.end_offsets([tp], timeout_ms=5000)
        assert reader.end_offsets([tp], timeout_ms=10_000) == {tp: 5}
        reader.close()
        plain.close()
    finally:
        admin.close()


def test_a_read_while_a_broker_hangs_waits_for_its_fence_not_for_its_connection(
    make_cluster3: Callable[..., Cluster], monkeypatch
) -> None:
    """Lab 05 reads a partition while broker 3 hangs, right after the leader dropped it
    from the ISR (``replica.lag.time.max.ms``, 1 s here) and before the controller fences
    it (its session, 3 s). A new kafka-python client bootstraps from the live brokers, then
    opens its next connection to any broker their Metadata lists, broker 3 too: in about
    one read of three it waited out its connection setup, 10 s, 20 s or 30 s (the lab's
    "ListOffsets 30 s"). A read now starts once every running broker has applied the
    fence, and no longer lists broker 3. Before that fix this fails either way: a read
    that did not meet broker 3 came back before the fence, one that did took 10 s."""
    cluster = make_cluster3()
    monkeypatch.setenv(ENV_DIR, cluster.spec.root)
    lab = kafkalite.lab.connect()
    try:
        lab.create_topic("transfers", 1, 3, {"min.insync.replicas": "3"}, replicas=[[1, 2, 3]])
        producer = lab.producer(acks="all")
        producer.send("transfers", b"payment-0").get(timeout=10)
        lab.pause(3)
        producer.send("transfers", b"payment-1")  # waits for broker 3: the ISR shrinks
        lab.wait_for_isr("transfers", size=2)
        started = time.monotonic()
        assert b"payment-1" in lab.read("transfers")  # committed, not yet acknowledged
        took = time.monotonic() - started
        assert fenced_by_all(lab.cluster.events(brokers={1, 2}), fenced={3}, by={1, 2}), (
            "the read came back while brokers 1 and 2 still listed hung broker 3 to clients"
        )
        assert took < 8, f"the read took {took:.1f} s: its client waited on hung broker 3"
        lab.resume(3)
        producer.flush(30)  # payment-1, acknowledged once broker 3 is back in the ISR
    finally:
        lab.resume(3)
        lab.close()


def leader_of(cluster: Cluster, topic: str) -> int | None:
    rows = [p for p in cluster.status()["partitions"] if p["topic"] == topic]
    return rows[0]["leader"] if rows else None


def test_a_topic_made_afresh_keeps_its_shape_beside_open_clients(
    make_cluster3: Callable[..., Cluster], monkeypatch
) -> None:
    """A lab run again deletes and re-creates its topics while producers and consumers of
    earlier cells are still open; their metadata refreshes must not bring the topic back
    in the broker's default shape (1 partition, 1 replica) before the lab creates it. The
    lab's clients no longer ask for topics to be created (kafka-python 3.0 ignores its own
    allow_auto_create_topics), and create_topic checks the shape it got."""
    cluster = make_cluster3()
    monkeypatch.setenv(ENV_DIR, cluster.spec.root)
    lab = kafkalite.lab.connect()
    try:
        lab.create_topic("again", 3, 3)
        producer = lab.producer(acks="all", metadata_max_age_ms=200)
        producer.send("again", b"x").get(timeout=10)
        consumer = lab.consumer("again", group_id="again", metadata_max_age_ms=200)
        consumer.poll(1000)
        assert producer._metadata.metadata_request().allow_auto_topic_creation is False
        for _ in range(5):
            lab.create_topic("again", 3, 3)
            shape = lab.partitions("again")["replicas"].map(len).tolist()
            assert shape == [3, 3, 3], f"re-created as {shape}"
    finally:
        lab.close()


def test_a_group_worker_is_a_member_that_can_be_killed(
    make_cluster3: Callable[..., Cluster], monkeypatch
) -> None:
    """Lab 06's members: the first, alone, joins once (its own metadata refresh does not
    make it, the group's leader, join again: that second rebalance once met lab 06's
    restarted static member); two worker processes share a topic's partitions; the one
    killed hands its partitions to the other, which processes what the dead one had not
    committed (and nothing is lost)."""
    cluster = make_cluster3()
    monkeypatch.setenv(ENV_DIR, cluster.spec.root)
    lab = kafkalite.lab.connect()
    try:
        lab.create_topic("work", 2, 3)
        history = lab.new_history()
        producer = lab.producer(acks="all")
        for i in range(40):
            producer.send("work", b"job-%d" % i, partition=i % 2)
        producer.flush()
        first = lab.group_worker("first", "work", "workers", per_record_ms=100)
        lab.wait_for(lambda: len(first.events("committed")) >= 2, 60, "first to commit twice")
        assert [e["generation"] for e in first.events("assigned")] == [1]
        second = lab.group_worker("second", "work", "workers", per_record_ms=100)
        lab.wait_for(lambda: first.assignment() and second.assignment(), 60, "both assigned")
        # work for after the rebalance: alone, first may have done all of what became its
        # partition before second joined, and then never was mid-batch (CI, 2026-11-29)
        for i in range(40, 80):
            producer.send("work", b"job-%d" % i, partition=i % 2)
        producer.flush()
        redone = first.kill_mid_batch(lambda: lab.committed_offsets("workers", "work"))
        assert len(redone) >= 2, redone
        lab.wait_for(lambda: second.assignment() == [0, 1], 60, "second to take over")
        lab.wait_for(
            lambda: len({v for w in (first, second) for v in w.processed()}) == 80, 60, "all"
        )
        done = [v.encode() for v in first.processed() + second.processed()]
        result = lab.check(history, output=done)
        assert result.counts["lost"] == 0, result
        assert set(redone) <= set(second.processed())
        members = lab.members("workers")
        assert list(members["client_id"]) == ["second"]
    finally:
        lab.close()


def test_consumer_protocol_workers_scale_up_incrementally(
    make_cluster3: Callable[..., Cluster], monkeypatch
) -> None:
    """Lab 06's KIP-848 members (``protocol="consumer"``, confluent-kafka): when a second
    member joins, the first gives up only the partitions that move, and the coordinator's
    view (``lab.group_state``) shows both at the group's epoch, speaking the consumer
    protocol."""
    cluster = make_cluster3()
    monkeypatch.setenv(ENV_DIR, cluster.spec.root)
    lab = kafkalite.lab.connect()
    try:
        lab.create_topic("work", 4, 3)
        producer = lab.producer(acks="all")
        for i in range(80):
            producer.send("work", b"job-%d" % i, partition=i % 4)
        producer.flush()
        first = lab.group_worker("first", "work", "kip848", protocol="consumer")
        lab.wait_for(lambda: first.assignment() == [0, 1, 2, 3], 60, "first to read all")
        second = lab.group_worker("second", "work", "kip848", protocol="consumer")
        lab.wait_for(
            lambda: len(first.assignment()) == len(second.assignment()) == 2, 60, "two each"
        )
        given_up = [p for e in first.events("revoked") for p in e["partitions"]]
        assert sorted(given_up) == sorted(set(range(4)) - set(first.assignment()))
        lab.wait_for(
            lambda: set(lab.group_state("kip848")["state"]) == {"STABLE"}, 30, "reconciled"
        )
        state = lab.group_state("kip848")
        assert list(state["client_id"]) == ["first", "second"]
        assert set(state["member_protocol"]) == {"consumer"}
        assert (state["member_epoch"] == state["group_epoch"]).all()
        lab.wait_for(lambda: len({v for w in (first, second) for v in w.processed()}) == 80, 60)
    finally:
        lab.close()
