"""Failover figures on a three-broker cluster, measured from real faults, each at a quiet
moment and again with ``bench.idle --clusters 24`` running beside it (72 idle brokers: a
course server with a class's clusters, load average 4 or more on 2 cores).

- **Partition leader killed**: SIGKILL the leader of a 1-partition RF=3 topic
  (min.insync.replicas=2) while an idempotent acks=all confluent-kafka producer writes
  one record at a time; the figure is the time from the kill to the first acknowledged
  write that was sent after the kill. Every acknowledged write is read back afterwards:
  lost and duplicated records are reported (both must be 0).
- The same with kafka-python (the students' client): one synchronous acks=all send right
  after the kill, timed until it is acknowledged.
- **Partition leader paused / isolated**: SIGSTOP it, or cut it off from the other
  brokers; the figure is the time until another broker is its partition's leader
  (``leader_elected``): the controller waits out its session (``broker.session.timeout.ms``,
  reported beside), since nothing closes, then elects.
- **Controller killed**: SIGKILL the active controller; the figure is the time from the
  kill to the ``controller_activated`` event of its successor (its first record - the
  LeaderChange of its epoch - is committed).

Each is the median and the maximum of ``--runs`` rounds; the broker is brought back and
the cluster allowed to heal between rounds. The quiet figures wait (at most 10 min) for a
quiet moment (one-minute load average under 1.5); the load averages are recorded.
Run: ``.venv/bin/python -m bench.failover`` (``--beside 0`` for the quiet figures only).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from functools import partial
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaProducer

from bench.common import (
    BESIDE_CLUSTERS,
    bench_cluster,
    failover_steps,
    idle_clusters_beside,
    load_average,
    record,
    wait_until_quiet,
)
from kafkalite.cluster import Cluster
from kafkalite.events import EventType
from tests.support.quorum import controller
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

RUNS = 7
SILENT_RUNS = 5
"""Rounds of each silent fault: each waits out a session."""


def partition_row(cluster: Cluster, topic: str) -> dict[str, Any]:
    return next(p for p in cluster.status()["partitions"] if p["topic"] == topic)


def healthy(cluster: Cluster, topic: str) -> bool:
    p = partition_row(cluster, topic)
    states = {b["state"] for b in cluster.status()["brokers"]}
    return states == {"running"} and p["leader"] is not None and len(p["isr"]) == 3


def sigkill(cluster: Cluster, broker_id: int) -> float:
    """Kill at a known instant, then let the backend record it."""
    os.kill(cluster.pid(broker_id), signal.SIGKILL)
    killed = time.time()
    cluster.kill(broker_id)
    return killed


class Writer:
    """Writes 1 record at a time (acks=all, idempotent); remembers send and ack times."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 0,
                "retry.backoff.ms": 20,
                "retry.backoff.max.ms": 100,
                "reconnect.backoff.ms": 20,
                "reconnect.backoff.max.ms": 100,
                "topic.metadata.refresh.interval.ms": 200,
            }
        )
        self.topic = topic
        self.acks: list[tuple[float, float, bytes]] = []  # (sent, acked, value)
        self.errors = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        seq = 0
        while not self._stop.is_set():
            sent = time.time()
            value = b"%d" % seq
            seq += 1

            def done(error: Any, message: Any, sent: float = sent, value: bytes = value) -> None:
                if error is None:
                    self.acks.append((sent, time.time(), value))
                else:
                    self.errors += 1

            self.producer.produce(self.topic, value, on_delivery=done)
            self.producer.poll(0.005)
        self.producer.flush(60)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(90)

    def first_ack_sent_after(self, instant: float) -> float | None:
        after = [acked for sent, acked, _ in self.acks if sent > instant]
        return min(after) if after else None


def activations_after(cluster: Cluster, instant: float) -> list[float]:
    """When a controller became active after ``instant`` (seconds since the epoch)."""
    return [
        e["time_ms"] / 1000
        for e in cluster.events()
        if e["type"] == EventType.CONTROLLER_ACTIVATED and e["time_ms"] / 1000 > instant
    ]


def read_back(bootstrap: str, topic: str, expected: int) -> list[bytes]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "failover-check", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[bytes] = []
    idle = 0
    while idle < 5:
        batch = consumer.consume(10000, timeout=0.5)
        idle = 0 if batch or len(values) < expected else idle + 1
        values.extend(v for m in batch if not m.error() and (v := m.value()) is not None)
    consumer.close()
    return values


def figures(delays_s: list[float]) -> dict[str, Any]:
    """Median and maximum of ``delays_s``, in ms, and every run."""
    delays = [d * 1000 for d in delays_s]
    return {
        "runs_ms": [round(d) for d in delays],
        "median_ms": round(statistics.median(delays)),
        "max_ms": round(max(delays)),
    }


def partition_failover(cluster: Cluster, runs: int) -> dict[str, Any]:
    topic = f"failover-{uuid.uuid4().hex[:6]}"
    create_topic(cluster.bootstrap_servers, topic, 1, 3, {"min.insync.replicas": "2"})
    wait_for(lambda: healthy(cluster, topic), 30)
    writer = Writer(cluster.bootstrap_servers, topic)
    writer.start()
    delays = []
    steps = []
    try:
        for _ in range(runs):
            wait_for(lambda: healthy(cluster, topic), 60)
            time.sleep(1.0)
            leader = partition_row(cluster, topic)["leader"]
            killed = sigkill(cluster, leader)
            first = wait_for(partial(writer.first_ack_sent_after, killed), 30)
            delays.append(first - killed)
            steps.append(failover_steps(cluster, killed * 1000, leader, topic))
            cluster.start(leader)
    finally:
        writer.stop()
    acked = [value for _, _, value in writer.acks]
    values = read_back(cluster.bootstrap_servers, topic, len(acked))
    present = set(values)
    return {
        **figures(delays),
        "after_the_kill": steps,
        "acked_writes": len(acked),
        "lost": sum(1 for v in acked if v not in present),
        "duplicates": len(values) - len(present),
        "delivery_errors": writer.errors,
    }


def kafka_python_failover(cluster: Cluster, runs: int) -> dict[str, Any]:
    """The students' client: kafka-python acks=all, one synchronous send after the kill."""
    topic = f"failover-kp-{uuid.uuid4().hex[:6]}"
    create_topic(cluster.bootstrap_servers, topic, 1, 3, {"min.insync.replicas": "2"})
    producer = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers,
        acks="all",
        retry_backoff_ms=20,
        metadata_max_age_ms=1000,
        request_timeout_ms=5000,
    )
    delays = []
    try:
        for _ in range(runs):
            wait_for(lambda: healthy(cluster, topic), 60)
            for _ in range(10):
                producer.send(topic, b"warm").get(10)
            time.sleep(1.0)
            killed = sigkill(cluster, partition_row(cluster, topic)["leader"])
            producer.send(topic, b"after").get(30)
            delays.append(time.time() - killed)
            cluster.start(
                next(b["id"] for b in cluster.status()["brokers"] if b["state"] == "dead")
            )
    finally:
        producer.close(timeout=10)  # after a failed run, records may wait for a dead leader
    return figures(delays)


SILENCES: dict[str, tuple[Callable[[Cluster, int], None], Callable[[Cluster, int], None]]] = {
    "pause": (Cluster.pause, Cluster.resume),
    "isolate": (Cluster.isolate, Cluster.heal),
}
"""A silent fault and its undoing."""


def led_by_a_follower_of_the_quorum(cluster: Cluster, prefix: str) -> str:
    """A new topic (1 partition, RF 3) whose leader is not the active controller, healthy.
    A paused or isolated controller is replaced by the quorum first, and the new one
    starts every broker's session afresh, as Kafka's does: its partitions move a session
    after that election, not after the fault, a case apart."""
    wait_for(lambda: {b["state"] for b in cluster.status()["brokers"]} == {"running"}, 60)
    active = wait_for(lambda: controller(cluster), 60, "an active controller")
    brokers = [b.broker_id for b in cluster.spec.brokers]
    leader = next(b for b in brokers if b != active)
    topic = f"{prefix}-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    replicas = [leader, *(b for b in brokers if b != leader)]
    new = NewTopic(topic, 1, replica_assignment=[replicas], config={"min.insync.replicas": "2"})
    admin.create_topics([new])[topic].result(30)
    wait_for(
        lambda: healthy(cluster, topic) and partition_row(cluster, topic)["leader"] == leader, 60
    )
    time.sleep(1.0)  # a steady state: every broker's heartbeats under way
    return topic


def silent_leader_failover(cluster: Cluster, fault: str, runs: int) -> dict[str, Any]:
    """The leader of a partition paused or isolated: time until another broker leads it."""
    silence, undo = SILENCES[fault]
    stream = cluster.event_stream()
    delays, sessions = [], set()
    for _ in range(runs):
        topic = led_by_a_follower_of_the_quorum(cluster, f"silent-{fault}")
        leader = partition_row(cluster, topic)["leader"]
        stream.poll(cluster.broker_states())  # only what happens from now on counts
        silenced = time.time()
        silence(cluster, leader)
        seen: list[dict[str, Any]] = []

        def elected(
            leader: int = leader, topic: str = topic, seen: list[dict[str, Any]] = seen
        ) -> float | None:
            seen.extend(stream.poll(cluster.broker_states()))
            return next(
                (
                    e["time_ms"] / 1000
                    for e in seen
                    if e["type"] == EventType.LEADER_ELECTED
                    and e.get("topic") == topic
                    and e["broker"] != leader
                ),
                None,
            )

        try:
            delays.append(wait_for(elected, 60, "a new leader") - silenced)
        finally:
            undo(cluster, leader)
        sessions |= {e["session_ms"] for e in seen if e["type"] == "broker_session_expired"}
    return {**figures(delays), "sessions_ms": sorted(sessions)}


def controller_failover(cluster: Cluster, runs: int) -> dict[str, Any]:
    delays = []
    for _ in range(runs):
        wait_for(lambda: {b["state"] for b in cluster.status()["brokers"]} == {"running"}, 60)
        wait_for(
            lambda: (
                (q := cluster.status()["quorum"])
                and len(q["voters"]) == 3
                and all(v["lag"] == 0 for v in q["voters"])
            ),
            60,
        )
        time.sleep(0.5)
        active = next(b["id"] for b in cluster.status()["brokers"] if b["controller"])
        killed = sigkill(cluster, active)
        activated = wait_for(partial(activations_after, cluster, killed), 30)
        delays.append(min(activated) - killed)
        cluster.start(active)
    return figures(delays)


def measure(cluster: Cluster, runs: int) -> dict[str, Any]:
    """Every figure once on ``cluster``, with the load averages before and after."""
    before = load_average()
    results = {
        "partition_leader_kill_to_first_acks_all_write": partition_failover(cluster, runs),
        "same_with_kafka_python_one_send": kafka_python_failover(cluster, runs),
        "partition_leader_paused_to_new_leader": silent_leader_failover(
            cluster, "pause", min(runs, SILENT_RUNS)
        ),
        "partition_leader_isolated_to_new_leader": silent_leader_failover(
            cluster, "isolate", min(runs, SILENT_RUNS)
        ),
        "controller_kill_to_new_controller_commit": controller_failover(cluster, runs),
    }
    return {"load_average_before": before, **results, "load_average_after": load_average()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench.failover", description=__doc__)
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument(
        "--beside", type=int, default=BESIDE_CLUSTERS, help="idle clusters beside (0: none)"
    )
    parser.add_argument(
        "--quiet-wait-s", type=float, default=600, help="the longest wait for a quiet moment"
    )
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"brokers": 3}
    with bench_cluster(brokers=3) as cluster:
        wait_until_quiet(args.quiet_wait_s)
        results["quiet"] = measure(cluster, args.runs)
        if args.beside:
            with idle_clusters_beside(args.beside):
                results[f"beside_{args.beside}_idle_clusters"] = measure(cluster, args.runs)
    results["targets_ms"] = {
        "partition_kill": {"median": 1000, "max": 1500},
        "silent_leader": "broker.session.timeout.ms + 500",
        "controller_kill": 500,
    }
    record("failover", results)


if __name__ == "__main__":
    main()
