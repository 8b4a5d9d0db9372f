"""Failover figures on a three-broker cluster, measured from a real ``kill -9``.

- **Partition leader**: SIGKILL the leader of a 1-partition RF=3 topic
  (min.insync.replicas=2) while an idempotent acks=all confluent-kafka producer writes
  one record at a time; the figure is the time from the kill to the first acknowledged
  write that was sent after the kill. Every acknowledged write is read back afterwards:
  lost and duplicated records are reported (both must be 0).
- The same with kafka-python (the students' client): one synchronous acks=all send right
  after the kill, timed until it is acknowledged.
- **Controller**: SIGKILL the active controller; the figure is the time from the kill to
  the ``controller_activated`` event of its successor (its first record - the
  LeaderChange of its epoch - is committed).

Each is the median of ``RUNS`` rounds; the killed broker is restarted and the cluster
allowed to heal between rounds. Run: ``.venv/bin/python -m bench.failover``.
"""

from __future__ import annotations

import os
import signal
import statistics
import threading
import time
import uuid
from functools import partial
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from kafka import KafkaProducer

from bench.common import bench_cluster, record
from kafkalite.cluster import Cluster
from kafkalite.events import EventType
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

RUNS = 7


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


def partition_failover(cluster: Cluster) -> dict[str, Any]:
    topic = f"failover-{uuid.uuid4().hex[:6]}"
    create_topic(cluster.bootstrap_servers, topic, 1, 3, {"min.insync.replicas": "2"})
    wait_for(lambda: healthy(cluster, topic), 30)
    writer = Writer(cluster.bootstrap_servers, topic)
    writer.start()
    delays = []
    try:
        for _ in range(RUNS):
            wait_for(lambda: healthy(cluster, topic), 60)
            time.sleep(1.0)
            leader = partition_row(cluster, topic)["leader"]
            killed = sigkill(cluster, leader)
            first = wait_for(partial(writer.first_ack_sent_after, killed), 30)
            delays.append((first - killed) * 1000)
            cluster.start(leader)
    finally:
        writer.stop()
    acked = [value for _, _, value in writer.acks]
    values = read_back(cluster.bootstrap_servers, topic, len(acked))
    present = set(values)
    return {
        "runs_ms": [round(d) for d in delays],
        "median_ms": round(statistics.median(delays)),
        "max_ms": round(max(delays)),
        "acked_writes": len(acked),
        "lost": sum(1 for v in acked if v not in present),
        "duplicates": len(values) - len(present),
        "delivery_errors": writer.errors,
    }


def kafka_python_failover(cluster: Cluster) -> dict[str, Any]:
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
        for _ in range(RUNS):
            wait_for(lambda: healthy(cluster, topic), 60)
            for _ in range(10):
                producer.send(topic, b"warm").get(10)
            time.sleep(1.0)
            killed = sigkill(cluster, partition_row(cluster, topic)["leader"])
            producer.send(topic, b"after").get(30)
            delays.append((time.time() - killed) * 1000)
            cluster.start(
                next(b["id"] for b in cluster.status()["brokers"] if b["state"] == "dead")
            )
    finally:
        producer.close(timeout=10)  # after a failed run, records may wait for a dead leader
    return {
        "runs_ms": [round(d) for d in delays],
        "median_ms": round(statistics.median(delays)),
        "max_ms": round(max(delays)),
    }


def controller_failover(cluster: Cluster) -> dict[str, Any]:
    delays = []
    for _ in range(RUNS):
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
        delays.append((min(activated) - killed) * 1000)
        cluster.start(active)
    return {
        "runs_ms": [round(d) for d in delays],
        "median_ms": round(statistics.median(delays)),
        "max_ms": round(max(delays)),
    }


def main() -> None:
    with bench_cluster(brokers=3) as cluster:
        partition = partition_failover(cluster)
        students_client = kafka_python_failover(cluster)
        controller = controller_failover(cluster)
    record(
        "failover",
        {
            "brokers": 3,
            "partition_leader_kill_to_first_acks_all_write": partition,
            "same_with_kafka_python_one_send": students_client,
            "controller_kill_to_new_controller_commit": controller,
            "targets_ms": {"partition": 1500, "controller": 1000},
        },
    )


if __name__ == "__main__":
    main()
