"""The chaos workload: real clients write and read while a nemesis breaks brokers.

After Jepsen's Kafka test. Producers (confluent-kafka, librdkafka) write unique values and
record every acknowledgement; assign-based consumers record every record they poll; a group
consumer records every offset commit that succeeded. A seeded nemesis kills, stops,
pauses, isolates and slows random brokers (the controller included), one at a time, and
heals each fault before the next. At the end every fault is healed, the partitions are
allowed to converge, and one last read of every partition gives the final log that
``kafkalite.checker`` compares the history with.
"""

from __future__ import annotations

import random
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition

from kafkalite.checker.history import Ack, Commit, Poll, Report, check
from kafkalite.cluster import Cluster
from tests.support.topics import create_topic as create
from tests.support.waiting import wait_for

Partition = tuple[str, int]
EVIDENCE = Path(__file__).resolve().parents[2] / ".test-logs" / "chaos"
"""Where a failed run's evidence is kept, beside the suite's logs: pytest keeps only its
last three temporary directories, and a CI's lanes start many sessions after this one."""


def keep_evidence(cluster: Cluster, name: str, notes: str) -> Path:
    """Copy ``cluster``'s logs (each broker's, the links') and fault records, not its
    data, and ``notes`` (what the workload recorded) to ``EVIDENCE/name``: a chaos
    failure shows under load, once in many runs, and cannot be diagnosed from its seed
    alone."""
    root = Path(cluster.spec.root)
    out = EVIDENCE / name
    for path in [*root.glob("*.*"), *root.glob("broker-*/broker.log")]:
        target = out / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    (out / "workload.txt").write_text(notes)
    return out


@dataclass
class History:
    acks: list[Ack] = field(default_factory=list)
    polls: list[Poll] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    send_errors: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True)
class Workload:
    seconds: float
    seed: int
    acks: str = "all"
    idempotent: bool = True
    partitions: int = 3
    producers: int = 2
    consumers: int = 2
    faults: tuple[str, ...] = ("kill", "stop", "pause", "isolate", "slow")
    fault_every_s: float = 3.0
    rate_per_producer: int = 300
    """Records per second each producer offers. Jepsen-style tests run at modest rates:
    the point is the faults, and three brokers plus the clients share two cores."""


def create_topic(cluster: Cluster, partitions: int) -> str:
    name = f"chaos-{uuid.uuid4().hex[:8]}"
    create(cluster.bootstrap_servers, name, partitions, 3, {"min.insync.replicas": "2"})
    return name


def run_producer(
    cluster: Cluster,
    topic: str,
    index: int,
    workload: Workload,
    stop: threading.Event,
    history: History,
) -> None:
    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "acks": workload.acks,
            "enable.idempotence": workload.idempotent,
            "linger.ms": 2,
            "retry.backoff.ms": 50,
            "message.timeout.ms": 20000,
            "topic.metadata.refresh.interval.ms": 1000,
        }
    )

    def delivered(error: KafkaError | None, message: Any) -> None:
        with history.lock:
            if error is None:
                history.acks.append(
                    Ack((topic, message.partition()), message.value(), message.offset())
                )
            else:
                history.send_errors += 1

    seq = 0
    started = time.monotonic()
    while not stop.is_set():
        due = int((time.monotonic() - started) * workload.rate_per_producer)
        while seq < due:
            try:
                producer.produce(topic, b"p%d-%d" % (index, seq), on_delivery=delivered)
            except BufferError:
                break
            seq += 1
        producer.poll(0.01)
    producer.flush(30)


def run_reader(
    cluster: Cluster,
    topic: str,
    index: int,
    workload: Workload,
    stop: threading.Event,
    history: History,
) -> None:
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": f"reader-{index}",  # unused: assign() without commits
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "topic.metadata.refresh.interval.ms": 1000,
        }
    )
    consumer.assign(
        [TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(workload.partitions)]
    )
    name = f"reader-{index}"
    while not stop.is_set():
        for message in consumer.consume(100, 0.2):
            if message.error():
                continue
            with history.lock:
                history.polls.append(
                    Poll(name, (topic, message.partition()), ((message.offset(), message.value()),))
                )
    consumer.close()


def run_committer(cluster: Cluster, topic: str, stop: threading.Event, history: History) -> None:
    group = f"committer-{uuid.uuid4().hex[:6]}"
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": 6000,
        }
    )
    consumer.subscribe([topic])
    last_commit = time.monotonic()
    while not stop.is_set():
        consumer.consume(100, 0.2)
        if time.monotonic() - last_commit < 0.5:
            continue
        last_commit = time.monotonic()
        try:
            committed = consumer.commit(asynchronous=False)
        except Exception:
            continue
        with history.lock:
            for tp in committed or []:
                if tp.error is None and tp.offset >= 0:
                    history.commits.append(Commit(group, (tp.topic, tp.partition), tp.offset))
    consumer.close()


SPLIT_BRAIN_WAIT_S = 20.0


class Nemesis:
    """One fault at a time on a random broker, healed before the next (seeded)."""

    def __init__(self, cluster: Cluster, workload: Workload, history: History, topic: str) -> None:
        self.cluster = cluster
        self.topic = topic
        self.workload = workload
        self.history = history
        self.rng = random.Random(workload.seed)

    def run(self, stop: threading.Event) -> None:
        while not stop.wait(self.workload.fault_every_s * (0.5 + self.rng.random())):
            fault = self.rng.choice(self.workload.faults)
            broker = self.rng.choice([b.broker_id for b in self.cluster.spec.brokers])
            split_brain = fault == "isolate-leader"
            if split_brain:
                fault, broker = "isolate", self.leader() or broker
            self.history.faults.append(f"{time.strftime('%H:%M:%S')} {fault} {broker}")
            self.inject(fault, broker)
            if split_brain:
                self.await_another_leader(broker)
            stop.wait(self.workload.fault_every_s * (0.5 + self.rng.random()))
            self.heal(fault, broker)

    def await_another_leader(self, isolated: int) -> None:
        """Hold the isolation until the others have elected a leader (as lab 04 does), at
        most ``SPLIT_BRAIN_WAIT_S``, even past the workload's end: the controller fences
        the isolated leader only once its session has run out, and a split brain needs
        both leaders."""
        deadline = time.monotonic() + SPLIT_BRAIN_WAIT_S
        while time.monotonic() < deadline and self.leader() in (None, isolated):
            time.sleep(0.1)

    def leader(self) -> int | None:
        rows = [p for p in self.cluster.status()["partitions"] if p["topic"] == self.topic]
        return next((p["leader"] for p in rows if p["partition"] == 0), None)

    def inject(self, fault: str, broker: int) -> None:
        actions: dict[str, Callable[[], None]] = {
            "kill": lambda: self.cluster.kill(broker),
            "stop": lambda: self.cluster.stop(broker),
            "pause": lambda: self.cluster.pause(broker),
            "isolate": lambda: self.cluster.isolate(broker),
            "slow": lambda: self.cluster.slow(broker, 300),
        }
        actions[fault]()

    def heal(self, fault: str, broker: int) -> None:
        if fault in ("kill", "stop"):
            self.cluster.start(broker)
        elif fault == "pause":
            self.cluster.resume(broker)
        else:
            self.cluster.heal(broker)


def wait_converged(
    cluster: Cluster, topic: str, partitions: int, timeout_s: float, *, idle: bool
) -> None:
    """Every partition led, with all three replicas in sync; ``idle`` (no more writes):
    also every replica's log equal to the high watermark."""
    try:
        wait_for(
            lambda: converged(cluster, topic, partitions, idle), timeout_s, "replicas to converge"
        )
    except AssertionError as exc:
        rows = [p for p in cluster.status()["partitions"] if p["topic"] == topic]
        raise AssertionError(f"{exc}; partitions: {rows}; {cluster.status()['brokers']}") from None


def converged(cluster: Cluster, topic: str, partitions: int, idle: bool) -> bool:
    rows = [p for p in cluster.status()["partitions"] if p["topic"] == topic]
    if len(rows) != partitions:
        return False
    for p in rows:
        ends = {r["log_end_offset"] for r in p["replicas"]}
        if p["leader"] is None or len(p["isr"]) != 3:
            return False
        if idle and ends != {p["high_watermark"]}:
            return False
    return True


def final_log(cluster: Cluster, topic: str, partitions: int) -> dict[Partition, dict[int, bytes]]:
    """Every partition read from its start to its high watermark, after healing."""
    rows = {p["partition"]: p for p in cluster.status()["partitions"] if p["topic"] == topic}
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": "final-read",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    log: dict[Partition, dict[int, bytes]] = {(topic, p): {} for p in range(partitions)}
    wanted = sum(rows[p]["high_watermark"] for p in range(partitions))
    deadline = time.monotonic() + 60
    got = 0
    while got < wanted and time.monotonic() < deadline:
        for message in consumer.consume(1000, 0.5):
            if message.error():
                continue
            log[(topic, message.partition())][message.offset()] = message.value()
            got += 1
    consumer.close()
    return log


def readers_caught_up(cluster: Cluster, topic: str, workload: Workload, history: History) -> bool:
    """Every reader has read every partition up to its high watermark."""
    rows = [p for p in cluster.status()["partitions"] if p["topic"] == topic]
    hws = {p["partition"]: p["high_watermark"] for p in rows}
    if any(hws.get(p) is None for p in range(workload.partitions)):
        return False
    read: dict[tuple[str, int], int] = {}
    with history.lock:
        for poll in history.polls:
            key = (poll.consumer, poll.partition[1])
            read[key] = max([read.get(key, -1), *(offset for offset, _ in poll.records)])
    return all(
        read.get((f"reader-{i}", p), -1) >= hws[p] - 1
        for i in range(workload.consumers)
        for p in range(workload.partitions)
    )


def run(cluster: Cluster, workload: Workload) -> tuple[Report, History]:
    topic = create_topic(cluster, workload.partitions)
    history = History()
    producers_stop, readers_stop = threading.Event(), threading.Event()
    producers = [
        threading.Thread(
            target=run_producer,
            args=(cluster, topic, i, workload, producers_stop, history),
            daemon=True,
        )
        for i in range(workload.producers)
    ]
    readers = [
        threading.Thread(
            target=run_reader,
            args=(cluster, topic, i, workload, readers_stop, history),
            daemon=True,
        )
        for i in range(workload.consumers)
    ]
    readers.append(
        threading.Thread(
            target=run_committer, args=(cluster, topic, readers_stop, history), daemon=True
        )
    )
    nemesis_stop = threading.Event()
    nemesis = threading.Thread(
        target=Nemesis(cluster, workload, history, topic).run, args=(nemesis_stop,)
    )
    for t in producers + readers:
        t.start()
    nemesis.start()
    time.sleep(workload.seconds)  # the workload's duration, faults and all
    nemesis_stop.set()
    nemesis.join(120)
    for b in cluster.spec.brokers:  # heal everything that might still be broken
        cluster.heal(b.broker_id)
        if cluster.broker_states()[b.broker_id].value in ("dead", "stopped"):
            cluster.start(b.broker_id)
    wait_converged(cluster, topic, workload.partitions, 90, idle=False)
    producers_stop.set()
    for t in producers:
        t.join(60)
    wait_converged(cluster, topic, workload.partitions, 60, idle=True)
    wait_for(
        lambda: readers_caught_up(cluster, topic, workload, history),
        60,
        "every reader to read up to the high watermark",
    )
    readers_stop.set()
    for t in readers:
        t.join(60)
    report = check(
        history.acks, history.polls, history.commits, final_log(cluster, topic, workload.partitions)
    )
    return report, history
