"""Run inside the course stack's lab container: every fault verb of the Docker backend,
under an acks=all load, and a JSON report on stdout for the test on the host.

What a student does in lab 04 and what an instructor does from the lab's terminal:
create a replicated topic, keep writing to it, kill a partition's leader and watch another
replica take over, bring it back; then pause one broker, isolate another (it must keep
answering its own clients), stop one (a controlled shutdown: its container exits 0). At
the end one read of every partition is the final log, and the history checker says
whether any acknowledged write was lost or duplicated.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaProducer

import kafkalite.lab
from kafkalite.checker import Ack, check
from kafkalite.cluster import BrokerState, Cluster
from kafkalite.cluster.docker_backend import DockerBackend
from kafkalite.cluster.healthcheck import probe
from kafkalite.lab.lab import Lab, LabTimeoutError
from tests.support.waiting import wait_for

TOPIC = "failover"
PARTITIONS = 3


@dataclass
class Load:
    """An idempotent acks=all producer writing unique values until stopped."""

    bootstrap: str
    acks: list[Ack] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _on_delivery(self, err: KafkaError | None, msg: Any) -> None:
        if err is not None:
            self.errors.append(str(err))
        else:
            self.acks.append(Ack((msg.topic(), msg.partition()), msg.value(), msg.offset()))

    def _run(self) -> None:
        producer = Producer(
            {
                "bootstrap.servers": self.bootstrap,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 5,
                "message.timeout.ms": 60000,
            }
        )
        n = 0
        while not self._stop.is_set():
            producer.produce(TOPIC, f"v{n}".encode(), on_delivery=self._on_delivery)
            n += 1
            producer.poll(0.01)
        producer.flush(90)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(120)


def partitions(cluster: Cluster) -> list[dict[str, Any]]:
    return [p for p in cluster.status()["partitions"] if p["topic"] == TOPIC]


def leader(cluster: Cluster, index: int) -> int | None:
    found = [p["leader"] for p in partitions(cluster) if p["partition"] == index]
    return found[0] if found else None


def isr_complete(cluster: Cluster) -> bool:
    found = partitions(cluster)
    return len(found) == PARTITIONS and all(len(p["isr"]) == 3 for p in found)


def acked_since(load: Load, count: int) -> bool:
    return len(load.acks) > count + 20


def final_log(bootstrap: str) -> dict[tuple[str, int], dict[int, bytes]]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "final-read", "enable.auto.commit": False}
    )
    log: dict[tuple[str, int], dict[int, bytes]] = {}
    try:
        for p in range(PARTITIONS):
            low, high = watermarks(consumer, TopicPartition(TOPIC, p))
            consumer.assign([TopicPartition(TOPIC, p, low)])
            records: dict[int, bytes] = {}
            deadline = time.monotonic() + 60
            while len(records) < high - low and time.monotonic() < deadline:
                msg = consumer.poll(1)
                if msg is not None and msg.error() is None:
                    records[msg.offset()] = msg.value()
            log[(TOPIC, p)] = records
    finally:
        consumer.close()
    return log


LEADERSHIP_MOVING = {
    KafkaError.NOT_LEADER_FOR_PARTITION,
    KafkaError.LEADER_NOT_AVAILABLE,
    KafkaError._TIMED_OUT,
    KafkaError._TRANSPORT,
}


def watermarks(consumer: Consumer, tp: TopicPartition) -> tuple[int, int]:
    """The partition's offsets, asked again while its leadership is still moving (a new
    leader elected after the faults answers NOT_LEADER until the client's metadata follows)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            low, high = consumer.get_watermark_offsets(tp, timeout=20)
            return low, high
        except KafkaException as exc:
            error = exc.args[0]
            moving = error.retriable() or error.code() in LEADERSHIP_MOVING
            if not moving or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def fault_steps(cluster: Cluster, load: Load) -> dict[str, Any]:
    report: dict[str, Any] = {}
    # -- lab 04: kill the leader of partition 0; another in-sync replica takes over
    old = leader(cluster, 0)
    assert old is not None
    cluster.kill(old)
    report["killed"] = {"broker": old, "state": cluster.broker_states()[old].value}
    new = wait_for(
        lambda: (leader(cluster, 0) or 0) not in (0, old) and leader(cluster, 0),
        30,
        "a new leader of partition 0",
    )
    report["killed"]["new_leader"] = new
    sync = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    report["kafka_python_after_failover"] = (
        sync.send(TOPIC, b"after-kill", partition=0).get(30).offset
    )
    sync.close()
    cluster.start(old)
    wait_for(lambda: isr_complete(cluster), 120, f"broker {old} back in every ISR")
    report["restarted"] = cluster.broker_states()[old].value

    # -- pause: a hung broker leaves the ISR; resume: it catches up and rejoins
    paused = 1 + old % 3
    cluster.pause(paused)
    report["paused"] = {"broker": paused, "state": cluster.broker_states()[paused].value}
    wait_for(lambda: not isr_complete(cluster), 30, f"paused broker {paused} out of an ISR")
    cluster.resume(paused)
    wait_for(lambda: isr_complete(cluster), 120, f"broker {paused} back in every ISR")

    # -- isolate: cut from its peers, it keeps answering its own clients
    isolated = 1 + paused % 3
    acked = len(load.acks)
    cluster.isolate(isolated)
    broker = cluster.spec.broker(isolated)
    report["isolated"] = {
        "broker": isolated,
        "state": cluster.broker_states()[isolated].value,
        "answers_clients": probe(broker.host, broker.port) is None,
    }
    wait_for(lambda: not isr_complete(cluster), 30, f"isolated broker {isolated} out of an ISR")
    report["isolated"]["answers_clients_later"] = probe(broker.host, broker.port) is None
    wait_for(lambda: acked_since(load, acked), 60, "acknowledged writes while isolated")
    cluster.heal()
    wait_for(lambda: isr_complete(cluster), 120, f"broker {isolated} back in every ISR")

    # -- slow: the broker's replication fetches arrive late; writes keep being acknowledged
    backend = cluster.backend
    assert isinstance(backend, DockerBackend)
    acked = len(load.acks)
    cluster.slow(paused, 300)
    report["slowed"] = {
        "broker": paused,
        "slow_ms": backend.fault_state().slow_ms,
        "in_status": {b["id"]: b["slow_ms"] for b in cluster.status()["brokers"]},
    }
    wait_for(lambda: acked_since(load, acked), 60, "acknowledged writes while slowed")
    cluster.heal()
    report["healed"] = backend.fault_state().to_json()

    # -- stop: a controlled shutdown (SIGTERM through tini); the container exits 0
    cluster.stop(isolated)
    state = backend.container(broker).attrs["State"]
    report["stopped"] = {
        "broker": isolated,
        "state": cluster.broker_states()[isolated].value,
        "exit_code": state["ExitCode"],
    }
    cluster.start(isolated)
    wait_for(lambda: isr_complete(cluster), 120, f"broker {isolated} back in every ISR")
    report["states_at_end"] = {str(b): s.value for b, s in cluster.broker_states().items()}
    return report


def explain_what_never_came_back(lab: Lab) -> None:
    """On stderr, whose tail the host-side test shows: the brokers, the partitions not
    fully in sync, then the cluster's latest events (fences, elections, ISR changes,
    refused AlterPartitions) that say why."""
    status = lab.status()
    print(json.dumps(status["brokers"]), file=sys.stderr)
    for p in status["partitions"]:
        if p["leader"] is None or len(p["isr"]) < len(p["replicas"]):
            print(json.dumps(p), file=sys.stderr)
    for event in lab.cluster.events()[-40:]:
        event.pop("seq", None)
        print(json.dumps(event, separators=(",", ":")), file=sys.stderr)


def main() -> None:
    lab = kafkalite.lab.connect()  # as a notebook does: the Docker backend here
    try:
        lab.reset(timeout_s=120)  # whatever an earlier lab left broken comes back first
    except LabTimeoutError:
        explain_what_never_came_back(lab)
        raise
    cluster = lab.cluster
    assert all(s == BrokerState.RUNNING for s in cluster.broker_states().values())
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    topic = NewTopic(TOPIC, PARTITIONS, 3, config={"min.insync.replicas": "2"})
    admin.create_topics([topic])[TOPIC].result(30)
    wait_for(lambda: isr_complete(cluster), 30, "the topic's replicas in sync")
    load = Load(cluster.bootstrap_servers)
    load.start()
    try:
        wait_for(lambda: acked_since(load, 0), 60, "the first acknowledged writes")
        report = fault_steps(cluster, load)
    finally:
        load.stop()
    wait_for(lambda: isr_complete(cluster), 120, "every replica back in sync for the final read")
    result = check(load.acks, [], [], final_log(cluster.bootstrap_servers))
    report["acked"] = result.acked
    report["errors"] = load.errors[:10]
    report["anomalies"] = {k: v[:5] for k, v in result.anomalies.items() if v}
    report["status"] = cluster.status()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
