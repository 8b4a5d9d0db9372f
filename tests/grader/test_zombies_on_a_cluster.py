"""On real brokers: once the broker's timeout has aborted a killed producer's transaction,
a read_committed reader sees the same output whether the restart fenced it or not; the
coordinators' record (``grader.zombies``) still tells the two apart. This is how lab 09's
``start_copy`` judged a Spark query restarted without its checkpoint before: by the copy
alone, which a restart slower than ``transaction.timeout.ms`` left exact."""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka import Producer

from grader.zombies import LeftOpen, left_open
from kafkalite.cluster import Cluster
from kafkalite.lab.recording import read_final_log
from tests.support.topics import create_topic

pytestmark = [pytest.mark.grader, pytest.mark.interop]

TIMEOUT_MS = 1000
"""The killed producer's transaction.timeout.ms: the broker aborts it within a second or
two (the cluster looks every second), where a Spark restart outlasts librdkafka's 60 s."""


def _transactional(cluster: Cluster, txn_id: str, **settings: Any) -> Any:
    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": txn_id, **settings}
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    return producer


def _killed_mid_transaction(cluster: Cluster, topic: str, txn_id: str) -> Any:
    """A producer whose transaction is open on ``topic`` and will never end it (kept
    referenced: to the coordinator, a killed producer and a silent one are the same)."""
    zombie = _transactional(cluster, txn_id, **{"transaction.timeout.ms": TIMEOUT_MS})
    for i in range(3):
        zombie.produce(topic, b"first-run-%d" % i, partition=i % 2)
    assert zombie.flush(30) == 0
    return zombie


def _restart(cluster: Cluster, topic: str, txn_id: str) -> None:
    producer = _transactional(cluster, txn_id)
    for i in range(3):
        producer.produce(topic, b"order-%d" % i, partition=i % 2)
    producer.commit_transaction(30)


def _timed_out(cluster: Cluster, txn_id: str) -> bool:
    return any(
        e["type"] == "txn_timed_out" and e.get("transactional_id") == txn_id
        for e in cluster.events()
    ) and all(
        t["state"] != "Ongoing"
        for t in cluster.status()["transactions"]
        if t["transactional_id"] == txn_id
    )


def _wait(condition: Any, what: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout_s:.0f} s for {what}"
        time.sleep(0.1)


def _copy(cluster: Cluster, topic: str) -> list[bytes]:
    log = read_final_log(
        cluster.bootstrap_servers, [(topic, 0), (topic, 1)], isolation_level="read_committed"
    )
    return sorted(value for p in log for value in log[p].values())


def _left(cluster: Cluster, topic: str) -> list[LeftOpen]:
    return left_open(topic, cluster.status()["transactions"], cluster.events())


def test_a_restart_under_a_new_id_is_told_from_a_slow_one_under_the_same_id(
    cluster3: Cluster, topic: str
) -> None:
    wrong, slow = f"{topic}-wrong", f"{topic}-slow"
    for name in (wrong, slow):
        create_topic(cluster3.bootstrap_servers, name, partitions=2, rf=3)
    zombies = [
        _killed_mid_transaction(cluster3, wrong, f"{wrong}-first"),
        _killed_mid_transaction(cluster3, slow, f"{slow}-query"),
    ]
    _restart(cluster3, wrong, f"{wrong}-second")  # a new query id: nothing fenced
    assert _left(cluster3, wrong) == [LeftOpen(f"{wrong}-first", "still open")]

    _wait(lambda: _timed_out(cluster3, f"{wrong}-first"), "the broker to abort it")
    _wait(lambda: _timed_out(cluster3, f"{slow}-query"), "the broker to abort it")
    _restart(cluster3, slow, f"{slow}-query")  # the same id, after the timeout
    expected = sorted(b"order-%d" % i for i in range(3))
    assert _copy(cluster3, wrong) == _copy(cluster3, slow) == expected  # a reader: the same
    aborted = "aborted by the broker's transaction timeout"
    assert _left(cluster3, wrong) == [LeftOpen(f"{wrong}-first", aborted)]
    assert _left(cluster3, slow) == []
    del zombies


def test_a_restart_under_the_same_id_fences_the_killed_producer_at_once(
    cluster3: Cluster, topic: str
) -> None:
    create_topic(cluster3.bootstrap_servers, topic, partitions=2, rf=3)
    zombie = _transactional(cluster3, f"{topic}-query")  # librdkafka's 60 s timeout
    zombie.produce(topic, b"first-run", partition=0)
    assert zombie.flush(30) == 0
    _restart(cluster3, topic, f"{topic}-query")
    assert _left(cluster3, topic) == []
    assert _copy(cluster3, topic) == sorted(b"order-%d" % i for i in range(3))
