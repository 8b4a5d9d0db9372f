"""Fault scenarios on a real three-broker cluster, recorded as the dashboard sees them.

Each scenario drives real kafka-python clients and real faults and takes a *step* at
each moment worth drawing: ``{"name", "time_ms", "status", "events"}``, where ``status``
is ``Cluster.status()`` and ``events`` what ``Cluster.event_stream().poll()`` returned
since the previous step. ``python -m tests.dashboard.scenarios`` writes them to
``tests/unit/lab/dashboard/recorded/`` (the dashboard model's unit tests read them there); the
live test runs the same scenarios and feeds the steps straight to the model.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafka import KafkaProducer

from kafkalite.cluster import Cluster
from tests.support.ports import free_base_port
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

FIXTURES = Path(__file__).parent.parent / "unit" / "lab" / "dashboard" / "recorded"
TOPIC = "orders"

Step = dict[str, Any]


class Recorder:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.stream = cluster.event_stream()
        self.steps: list[Step] = []

    def step(self, name: str) -> Step:
        states = self.cluster.broker_states()
        status = self.cluster.status(states=states)
        step = {
            "name": name,
            "time_ms": int(time.time() * 1000),
            "status": status,
            "events": self.stream.poll(states),
        }
        self.steps.append(step)
        return step

    def partition(self) -> dict[str, Any]:
        status = self.cluster.status()
        return next(p for p in status["partitions"] if p["topic"] == TOPIC)


def _produce(
    bootstrap: str, count: int, acks: int | str, prefix: str, producer: KafkaProducer | None = None
) -> None:
    """Synchronous sends to partition 0; a producer made before a fault is passed in (a new
    one would first have to bootstrap, and a paused broker answers no bootstrap)."""
    own = producer is None
    producer = producer or KafkaProducer(bootstrap_servers=bootstrap, acks=acks, retries=0)
    try:
        for i in range(count):
            producer.send(TOPIC, f"{prefix}-{i}".encode(), partition=0).get(timeout=20)
    finally:
        if own:
            producer.close(timeout=5)


def _settled(partition: dict[str, Any]) -> bool:
    """Every replica's log ends at the partition's high watermark: nothing in flight."""
    ends = {r["log_end_offset"] for r in partition["replicas"]}
    return ends == {partition["high_watermark"]}


def kill_leader(cluster: Cluster) -> list[Step]:
    """acks=all writes, then SIGKILL of the partition leader: a new leader, a new epoch,
    an ISR without the dead broker, and nothing lost."""
    rec = Recorder(cluster)
    create_topic(cluster.bootstrap_servers, TOPIC, 1, 3, {"min.insync.replicas": "2"})
    _produce(cluster.bootstrap_servers, 12, "all", "before")
    wait_for(lambda: all(r["log_end_offset"] == 12 for r in rec.partition()["replicas"]))
    old = rec.step("written")["status"]
    old_leader = next(p for p in old["partitions"] if p["topic"] == TOPIC)["leader"]
    cluster.kill(old_leader)
    wait_for(
        lambda: (
            (p := rec.partition())["leader"] not in (None, old_leader)
            and old_leader not in p["isr"]
        ),
        what="a new leader without the dead one in the ISR",
    )
    rec.step("leader killed")
    return rec.steps


def pause_follower(cluster: Cluster) -> list[Step]:
    """SIGSTOP of a follower: it falls out of the ISR while writes go on (uncommitted cells
    appear first, then the HW moves with the smaller ISR); after resume it catches up and
    is back in the ISR."""
    rec = Recorder(cluster)
    create_topic(cluster.bootstrap_servers, TOPIC, 1, 3, {"min.insync.replicas": "2"})
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    _produce(cluster.bootstrap_servers, 5, "all", "before", producer)
    p = rec.partition()
    follower = next(r["broker"] for r in p["replicas"] if r["broker"] != p["leader"])
    wait_for(lambda: all(r["log_end_offset"] == 5 for r in rec.partition()["replicas"]))
    rec.step("written")
    cluster.pause(follower)
    _produce(cluster.bootstrap_servers, 5, "all", "while-paused", producer)
    producer.close(timeout=5)
    wait_for(lambda: follower not in rec.partition()["isr"], what="the ISR to shrink")
    rec.step("follower paused")
    cluster.resume(follower)
    wait_for(
        lambda: follower in (p := rec.partition())["isr"] and _settled(p),
        what="the ISR to expand, every replica at the HW",
    )
    rec.step("follower resumed")
    return rec.steps


def isolated_leader_truncation(cluster: Cluster) -> list[Step]:
    """The network-partition case: the leader is isolated but still serves its clients,
    so acks=1 writes are acknowledged by it alone; the others elect a new leader that
    takes other writes; on heal the old leader truncates its acknowledged records."""
    rec = Recorder(cluster)
    create_topic(cluster.bootstrap_servers, TOPIC, 1, 3)
    _produce(cluster.bootstrap_servers, 6, "all", "before")
    p = rec.partition()
    old_leader = p["leader"]
    wait_for(lambda: all(r["log_end_offset"] == 6 for r in rec.partition()["replicas"]))
    cluster.isolate(old_leader)
    isolated = cluster.spec.broker(old_leader).address
    _produce(isolated, 4, 1, "acked-by-isolated-leader")
    wait_for(lambda: rec.partition()["leader"] not in (None, old_leader), what="a new leader")
    others = ",".join(b.address for b in cluster.spec.brokers if b.broker_id != old_leader)
    _produce(others, 3, "all", "after-election")
    rec.step("leader isolated")
    cluster.heal(old_leader)
    wait_for(lambda: old_leader in rec.partition()["isr"], timeout_s=30, what="the old leader back")
    rec.step("healed and truncated")
    return rec.steps


def transactions(cluster: Cluster) -> list[Step]:
    """A kafka-python transactional producer: a committed transaction, an aborted one
    (its records stay in the log, marked aborted), and one left open (the LSO stops at
    its first offset while the HW moves on)."""
    rec = Recorder(cluster)
    create_topic(cluster.bootstrap_servers, TOPIC, 1, 3)
    producer = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers, transactional_id="dashboard-tx"
    )
    try:
        producer.init_transactions()
        for outcome in ("commit", "abort", "open"):
            producer.begin_transaction()
            for i in range(3):
                producer.send(TOPIC, f"{outcome}-{i}".encode(), partition=0)
            producer.flush(20)
            if outcome == "commit":
                producer.commit_transaction()
            elif outcome == "abort":
                producer.abort_transaction()
        wait_for(
            lambda: (
                _settled(p := rec.partition())
                and p["open_transactions"]
                and p["aborted_transactions"]
            ),
            what="an open and an aborted transaction, every replica at the HW",
        )
        rec.step("open and aborted")
        producer.commit_transaction()
        wait_for(
            lambda: _settled(p := rec.partition()) and not p["open_transactions"],
            what="no open transaction, every replica at the HW",
        )
        rec.step("all ended")
    finally:
        producer.close(timeout=5)
    return rec.steps


SCENARIOS: dict[str, Callable[[Cluster], list[Step]]] = {
    "kill_leader": kill_leader,
    "pause_follower": pause_follower,
    "isolated_leader_truncation": isolated_leader_truncation,
    "transactions": transactions,
}


def record(name: str, root: Path) -> list[Step]:
    cluster = Cluster.up(root, brokers=3, base_port=free_base_port(3))
    try:
        return SCENARIOS[name](cluster)
    finally:
        cluster.down()


def main(names: list[str]) -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name in names or list(SCENARIOS):
        root = Path(tempfile.mkdtemp(prefix=f"kafkalite-{name}-"))
        try:
            steps = record(name, root)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        path = FIXTURES / f"{name}.json"
        path.write_text(json.dumps(steps, indent=1) + "\n")
        print(f"{path}: {len(steps)} steps")


if __name__ == "__main__":
    main(sys.argv[1:])
