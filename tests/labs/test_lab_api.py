"""The notebook API against a real three-broker cluster: kafka-python clients that record a
history the checker agrees with, group lag, fault windows, and a reset that brings every
broker back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from kafka import KafkaConsumer, KafkaProducer

import kafkalite.lab
from kafkalite.cluster import Cluster, ClusterError
from kafkalite.lab.connection import ENV_DIR, open_cluster

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
