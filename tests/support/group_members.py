"""Consumer-group members as applications run them: one consumer per process, polling in a
loop, that a test makes join, leave, die (SIGKILL), stop polling or stop altogether
(SIGSTOP), with the real clients (kafka-python and librdkafka, the latter with the classic
protocol or KIP-848's ``group.protocol=consumer``)."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import signal
import time
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer
from kafka import KafkaConsumer

from kafkalite.cluster import Cluster
from tests.support.waiting import wait_for

GROUP_CONFIG = {
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 300,
    "max.poll.interval.ms": 10000,
    "enable.auto.commit": False,
    "auto.offset.reset": "earliest",
}
KAFKA_PYTHON_POLL_MS = 1000
"""kafka-python 3.0.12 drops a JoinGroup + SyncGroup that answers after ``poll``'s timeout:
the next ``poll`` sees its finished task and sends a new JoinGroup instead of taking the
answer (``join_group_async``: ``if self._join_task is None or self._join_task.is_done``).
A leader's JoinGroup in a Stable group starts a rebalance (Kafka's rule), whose answer it
may drop again: with 100 ms polls on a loaded machine the leader dropped 6 of its first 7
assignments and the group rebalanced generation after generation, each member still
showing the assignment of the last answer it took, past the test's 40 s (CI: generation
4, one member holding all 4 partitions). A poll as long as a rebalance's round trip takes
almost every answer in the poll that sent it, as applications' one-second polls do."""


@dataclass(frozen=True)
class MemberSpec:
    """What a member's process is started with: where, which group, its client log, and
    client settings beside ``GROUP_CONFIG``'s."""

    bootstrap: str
    topic: str
    group: str
    log_file: str
    settings: dict[str, Any]


def _poll_loop(poll: Callable[[], set[int]], assigned: Any, stop: Any, busy: Any) -> None:
    """Poll (librdkafka every 100 ms, kafka-python every ``KAFKA_PYTHON_POLL_MS``) and
    publish the assignment; when the test sets ``busy``, stop polling that many seconds,
    as an application busy with a batch does."""
    while not stop.is_set():
        if busy.value > 0:
            seconds, busy.value = busy.value, -1  # -1: busy now
            time.sleep(seconds)
            busy.value = 0
        assigned.value = sum(1 << p for p in poll())


def _kafka_python_member(spec: MemberSpec, controls: tuple[Any, Any, Any]) -> None:
    """kafka-python logs what its coordinator does, to explain a failure, and each request
    and write to its sockets (``kafka.net``), to tell when one is on the wire."""
    handler = logging.FileHandler(spec.log_file)
    handler.setFormatter(logging.Formatter("%(asctime)s %(threadName)s %(name)s %(message)s"))
    for name in ("kafka.coordinator", "kafka.consumer.subscription_state", "kafka.net"):
        logging.getLogger(name).addHandler(handler)
        logging.getLogger(name).setLevel(logging.DEBUG)
    options = {k.replace(".", "_"): v for k, v in {**GROUP_CONFIG, **spec.settings}.items()}
    consumer = KafkaConsumer(
        spec.topic, bootstrap_servers=spec.bootstrap, group_id=spec.group, **options
    )

    def poll() -> set[int]:
        consumer.poll(timeout_ms=KAFKA_PYTHON_POLL_MS)
        return {tp.partition for tp in consumer.assignment()}

    _poll_loop(poll, *controls)
    consumer.close()  # sends LeaveGroup (a static member does not)


def _librdkafka_member(spec: MemberSpec, controls: tuple[Any, Any, Any]) -> None:
    consumer = Consumer(
        {
            "bootstrap.servers": spec.bootstrap,
            "group.id": spec.group,
            **GROUP_CONFIG,
            **spec.settings,
        }
    )
    consumer.subscribe([spec.topic])
    _librdkafka_loop(consumer, controls)


def _librdkafka_consumer_protocol_member(spec: MemberSpec, controls: tuple[Any, Any, Any]) -> None:
    """A KIP-848 member: the coordinator assigns, the session is the group's (the client
    may not set session.timeout.ms nor heartbeat.interval.ms), offsets are committed as it
    goes and on close."""
    consumer = Consumer(
        {
            "bootstrap.servers": spec.bootstrap,
            "group.id": spec.group,
            "group.protocol": "consumer",
            "max.poll.interval.ms": 10000,
            "auto.offset.reset": "earliest",
            "auto.commit.interval.ms": 500,
            **spec.settings,
        }
    )
    consumer.subscribe([spec.topic])
    _librdkafka_loop(consumer, controls)


def _librdkafka_loop(consumer: Consumer, controls: tuple[Any, Any, Any]) -> None:

    def poll() -> set[int]:
        consumer.poll(0.1)
        return {tp.partition for tp in consumer.assignment()}

    _poll_loop(poll, *controls)
    consumer.close()  # sends LeaveGroup


class Member:
    """One consumer process in a group, polling in a loop, as applications run (one
    consumer per process). ``leave()`` closes it cleanly (LeaveGroup); ``kill()`` SIGKILLs
    it, so the coordinator only notices by the missing heartbeats; ``busy(s)`` stops its
    polling for ``s`` seconds (its client keeps heartbeating meanwhile); ``pause()`` stops
    the whole process (SIGSTOP) until ``resume()``. ``settings`` are client settings
    beside ``GROUP_CONFIG``'s, such as a static member's ``group.instance.id``."""

    _context = multiprocessing.get_context("spawn")

    def __init__(
        self,
        client: str,
        bootstrap: str,
        topic: str,
        group: str,
        logs: Path,
        settings: dict[str, Any] | None = None,
    ) -> None:
        self.bootstrap = bootstrap
        self.log_file = logs / f"member-{uuid.uuid4().hex[:6]}.log"
        self.log_file.touch()
        self._assigned = self._context.Value("q", 0)
        self._stop = self._context.Event()
        self._busy = self._context.Value("d", 0.0)
        loop = MEMBER_LOOPS[client]
        controls = (self._assigned, self._stop, self._busy)
        self.process = self._context.Process(
            target=loop,
            args=(
                MemberSpec(bootstrap, topic, group, str(self.log_file), settings or {}),
                controls,
            ),
            daemon=True,
        )
        self.process.start()

    def busy(self, seconds: float) -> None:
        """Returns once the member has stopped polling."""
        self._busy.value = seconds
        wait_for(lambda: self._busy.value < 0, 10, "the member to stop polling")

    @property
    def assigned(self) -> set[int]:
        bits = self._assigned.value
        return {p for p in range(64) if bits >> p & 1}

    def leave(self) -> None:
        self._stop.set()
        self.process.join(timeout=20)
        if self.process.is_alive():
            self.process.kill()

    def kill(self) -> None:
        self.process.kill()
        self.process.join(timeout=10)

    def pause(self) -> None:
        os.kill(self.process.pid, signal.SIGSTOP)  # type: ignore[arg-type]

    def resume(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)  # type: ignore[arg-type]


def group_events(bootstrap: str) -> list[dict]:
    """The broker's group events, to explain a failure (introspection port = port + 100)."""
    host, port = bootstrap.split(",", maxsplit=1)[0].rsplit(":", 1)
    with urllib.request.urlopen(f"http://{host}:{int(port) + 100}/events?since=0", timeout=2) as r:
        events = json.loads(r.read())["events"]
    return [e for e in events if e["type"].startswith(("group", "consumer_group"))]


MEMBER_LOOPS: dict[str, Callable[..., None]] = {
    "kafka-python": _kafka_python_member,
    "librdkafka": _librdkafka_member,
    "librdkafka-consumer-protocol": _librdkafka_consumer_protocol_member,
}
"""A member's client: kafka-python, librdkafka (classic protocol) or librdkafka with
``group.protocol=consumer``."""


def settle(members: list[Member], partitions: int, timeout_s: float = 40) -> None:
    """Until the members own every partition exactly once, each at least one."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        owned = [m.assigned for m in members]
        if (
            set().union(*owned) == set(range(partitions))
            and sum(map(len, owned)) == partitions
            and all(owned)
        ):
            return
        time.sleep(0.1)
    events = group_events(members[0].bootstrap)[-8:]
    logs = "\n".join(
        f"{m.log_file.name}:\n" + "\n".join(m.log_file.read_text().splitlines()[-15:])
        for m in members
    )
    raise AssertionError(f"group did not settle: {[m.assigned for m in members]}; {events}\n{logs}")


def stable_group(cluster: Cluster, group: str) -> dict | None:
    """The group as its coordinator shows it (``Cluster.status()``), once it is Stable."""
    found = [g for g in cluster.status()["groups"] if g["group"] == group]
    return found[0] if found and found[0]["state"] == "Stable" else None


def fail_coordinator_over(cluster: Cluster, group: str) -> tuple[dict, dict]:
    """Kill (SIGKILL) the broker that coordinates the Stable ``group``: the group as that
    broker showed it, and as the next coordinator shows it once Stable there."""
    before = wait_for(lambda: stable_group(cluster, group), 20, "the group to be stable")
    cluster.kill(before["coordinator"])
    after = wait_for(
        lambda: (
            (v := stable_group(cluster, group)) and v["coordinator"] != before["coordinator"] and v
        ),
        30,
        "another coordinator to hold the group",
    )
    return before, after
