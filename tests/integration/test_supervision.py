"""A broker that loses a long-lived task, or cannot apply committed metadata, stops
instead of lingering as a zombie.

The follower's partition directory is removed under it (a failed disk, as a student's
``rm -rf`` would do): its replica fetcher fails on the next segment roll. Before, the
fetcher task died in silence and the broker went on serving without replicating; now the
broker halts, the cluster shows it dead, its log names the task, and the others carry on.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from kafka import KafkaProducer

from kafkalite.cluster import Cluster
from kafkalite.cluster.backend import BrokerState
from tests.integration.test_log_start import offsets_from_earliest, produce
from tests.integration.test_replication import create_topic, fully_replicated
from tests.support.topics import create_topic as create
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]


def test_a_broker_whose_replica_fetcher_dies_halts_and_the_cluster_carries_on(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    topic = create_topic(cluster, **{"min.insync.replicas": "1", "segment.bytes": "1000"})
    produce(cluster, topic, 5)
    p = wait_for(lambda: fully_replicated(cluster, topic), what="replicated")
    victim = next(r["broker"] for r in p["replicas"] if r["broker"] != p["leader"])
    shutil.rmtree(Path(cluster.spec.broker(victim).data_dir) / "logs" / f"{topic}-0")
    produce(cluster, topic, 45, size=100)  # the victim's next segment roll fails
    wait_for(
        lambda: cluster.broker_states()[victim] == BrokerState.DEAD,
        what=f"broker {victim} to halt",
    )
    log = (Path(cluster.spec.broker(victim).data_dir) / "broker.log").read_text()
    assert "task 'replica-fetcher-" in log and "died" in log
    assert offsets_from_earliest(cluster, topic, 50) == list(range(50))


def test_a_broker_that_cannot_apply_committed_metadata_halts(
    make_cluster3: Callable[..., Cluster],
) -> None:
    """A committed record this broker cannot apply (a disk error creating the new topic's
    log: a file sits where its directory must go) halts the broker. Before, the record was
    replayed by a bare callback on the main loop: asyncio logged the exception, the broker
    went on, its heartbeats reported the record applied and nobody fenced it, while it
    hosted no copy of a partition the controller counted it a replica (and maybe the
    leader) of: the zombie that supervision exists to prevent."""
    cluster = make_cluster3()
    states = cluster.status()["brokers"]
    victim = next(b["id"] for b in states if not b["controller"])
    topic = f"rep-{uuid.uuid4().hex[:8]}"
    (Path(cluster.spec.broker(victim).data_dir) / "logs" / f"{topic}-0").write_text("in the way")
    create(cluster.bootstrap_servers, topic, 1, 3, {"min.insync.replicas": "1"})
    wait_for(
        lambda: cluster.broker_states()[victim] == BrokerState.DEAD,
        what=f"broker {victim} to halt",
    )
    log = (Path(cluster.spec.broker(victim).data_dir) / "broker.log").read_text()
    assert "metadata" in log and "PartitionRecord" in log and "halting" in log
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    try:  # kafka-python, the students' client: the others carry the topic on
        for i in range(10):
            producer.send(topic, b"%d" % i).get(timeout=30)
    finally:
        producer.close()
    assert offsets_from_earliest(cluster, topic, 10) == list(range(10))
