"""Consumer groups with the real clients: partitions split, rebalance on join/leave/death,
committed offsets that survive a broker restart."""

from __future__ import annotations

import asyncio
import json
import logging
import multiprocessing
import os
import re
import signal
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka import TopicPartition as ATP
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as CTP
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from kafkalite.cluster import Cluster
from tests.support.waiting import wait_for

# Never beside the chaos tests, which starve everything else of CPU.
pytestmark = [pytest.mark.interop, pytest.mark.slow, pytest.mark.xdist_group("heavy")]

GROUP_CONFIG = {
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 300,
    "max.poll.interval.ms": 10000,
    "enable.auto.commit": False,
    "auto.offset.reset": "earliest",
}
CLIENTS = ["kafka-python", "librdkafka"]
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


def _create(bootstrap: str, topic: str, partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])
    admin.close()


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


def _kafka_python_member(
    bootstrap: str, topic: str, group: str, controls: tuple[Any, Any, Any], log_file: str
) -> None:
    """kafka-python logs what its coordinator does, to explain a failure, and each request
    and write to its sockets (``kafka.net``), to tell when one is on the wire."""
    handler = logging.FileHandler(log_file)
    handler.setFormatter(logging.Formatter("%(asctime)s %(threadName)s %(name)s %(message)s"))
    for name in ("kafka.coordinator", "kafka.consumer.subscription_state", "kafka.net"):
        logging.getLogger(name).addHandler(handler)
        logging.getLogger(name).setLevel(logging.DEBUG)
    options = {k.replace(".", "_"): v for k, v in GROUP_CONFIG.items()}
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, **options)

    def poll() -> set[int]:
        consumer.poll(timeout_ms=KAFKA_PYTHON_POLL_MS)
        return {tp.partition for tp in consumer.assignment()}

    _poll_loop(poll, *controls)
    consumer.close()  # sends LeaveGroup


def _librdkafka_member(
    bootstrap: str, topic: str, group: str, controls: tuple[Any, Any, Any], log_file: str
) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, **GROUP_CONFIG})
    consumer.subscribe([topic])

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
    the whole process (SIGSTOP) until ``resume()``."""

    _context = multiprocessing.get_context("spawn")

    def __init__(self, client: str, bootstrap: str, topic: str, group: str, logs: Path) -> None:
        self.bootstrap = bootstrap
        self.log_file = logs / f"member-{uuid.uuid4().hex[:6]}.log"
        self.log_file.touch()
        self._assigned = self._context.Value("q", 0)
        self._stop = self._context.Event()
        self._busy = self._context.Value("d", 0.0)
        loop = _kafka_python_member if client == "kafka-python" else _librdkafka_member
        controls = (self._assigned, self._stop, self._busy)
        self.process = self._context.Process(
            target=loop,
            args=(bootstrap, topic, group, controls, str(self.log_file)),
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


def _group_events(bootstrap: str) -> list[dict]:
    """The broker's group events, to explain a failure (introspection port = port + 100)."""
    host, port = bootstrap.split(",", maxsplit=1)[0].rsplit(":", 1)
    with urllib.request.urlopen(f"http://{host}:{int(port) + 100}/events?since=0", timeout=2) as r:
        return [e for e in json.loads(r.read())["events"] if e["type"].startswith("group")]


_JOIN_REQUEST = re.compile(r"host=\[([^\]]+)\].* Request \d+: JoinGroupRequest")


def _join_requests(lines: list[str]) -> list[tuple[int, str]]:
    """Where kafka-python's connections made a JoinGroup request: (line, socket)."""
    return [(i, m.group(1)) for i, x in enumerate(lines) if (m := _JOIN_REQUEST.search(x))]


def _join_sent(log_file: Path, before: int) -> bool:
    """Whether the JoinGroup after the first ``before`` was written to its socket: the
    socket's transport logs each write after the request was queued on it, and a write
    sends everything queued."""
    lines = log_file.read_text().splitlines()
    requests = _join_requests(lines)
    if len(requests) <= before:
        return False
    at, socket = requests[before]
    return any(f"[{socket}]>: sent " in x for x in lines[at:])


def _settle(members: list[Member], partitions: int, timeout_s: float = 40) -> None:
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
    events = _group_events(members[0].bootstrap)[-8:]
    logs = "\n".join(
        f"{m.log_file.name}:\n" + "\n".join(m.log_file.read_text().splitlines()[-15:])
        for m in members
    )
    raise AssertionError(f"group did not settle: {[m.assigned for m in members]}; {events}\n{logs}")


@pytest.mark.parametrize("client", CLIENTS)
def test_members_split_partitions_and_rebalance(
    client: str, bootstrap: str, topic: str, tmp_path: Path
) -> None:
    _create(bootstrap, topic, 4)
    group = f"g-{topic}"
    a, b = (Member(client, bootstrap, topic, group, tmp_path) for _ in range(2))
    _settle([a, b], 4)
    assert len(a.assigned) == 2 and len(b.assigned) == 2

    c = Member(client, bootstrap, topic, group, tmp_path)  # joins: a rebalance
    _settle([a, b, c], 4)

    c.leave()  # LeaveGroup: the others take over its partitions
    _settle([a, b], 4)

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    assert group in [g["group_id"] for g in admin.list_groups()]
    described = admin.describe_groups([group])[group]
    assert described["group_state"] == "Stable" and len(described["members"]) == 2
    admin.close()
    a.leave()
    b.leave()


@pytest.mark.parametrize("client", CLIENTS)
def test_a_killed_member_is_expired_by_session_timeout(
    client: str, bootstrap: str, topic: str, tmp_path: Path
) -> None:
    _create(bootstrap, topic, 2)
    group = f"g-{topic}"
    a, b = (Member(client, bootstrap, topic, group, tmp_path) for _ in range(2))
    _settle([a, b], 2)
    b.kill()  # kill -9: no LeaveGroup, heartbeats just stop
    started = time.monotonic()
    _settle([a], 2)
    assert time.monotonic() - started >= 1.0, "rebalanced before the session timeout"
    a.leave()


def test_a_kafka_python_leader_held_up_after_a_long_join_is_not_expired(
    bootstrap: str, topic: str, tmp_path: Path
) -> None:
    """The kafka-python leader's "stall after JoinGroup" on a loaded machine, made to
    happen: the rebalance waits 8 s for a busy member (session.timeout.ms 6 s,
    max.poll.interval.ms 10 s) while the leader waits in JoinGroup, unable to heartbeat;
    when the answer comes, the leader's process is held up (SIGSTOP, as a starved CPU
    holds it) before it can send SyncGroup. Its session starts over with the answer, as in
    Kafka, so it keeps its place. (It was expired at once, since its last heartbeat was
    before the long join: the rebalance began again, and the group stalled.)"""
    _create(bootstrap, topic, 3)
    group = f"g-{topic}"
    a, b = (Member("kafka-python", bootstrap, topic, group, tmp_path) for _ in range(2))
    _settle([a, b], 3)  # a leads the group
    b.busy(8)
    joins = len(_join_requests(a.log_file.read_text().splitlines()))
    c = Member("kafka-python", bootstrap, topic, group, tmp_path)  # a rebalance: rejoin
    wait_for(lambda: _join_sent(a.log_file, joins), 20, "the leader's rejoin on the wire")
    a.pause()  # its JoinGroup waits at the broker
    try:
        wait_for(
            lambda: any(
                e["type"] == "group_rebalanced" and len(e["members"]) == 3
                for e in _group_events(bootstrap)
                if e.get("group") == group
            ),
            20,
            "the join to complete",
        )
        time.sleep(1)  # held up a while after the answer came (the fault itself)
    finally:
        a.resume()
    _settle([a, b, c], 3)
    removed = [
        e
        for e in _group_events(bootstrap)
        if e["type"] == "group_member_removed" and e.get("group") == group
    ]
    assert removed == []
    for member in (a, b, c):
        member.leave()


def test_committed_offsets_survive_a_broker_restart(fresh_cluster: Cluster) -> None:
    bootstrap = fresh_cluster.bootstrap_servers
    _create(bootstrap, "orders", 2)
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, group_id="billing", enable_auto_commit=False
    )
    consumer.assign([TopicPartition("orders", 0), TopicPartition("orders", 1)])
    consumer.commit(
        {
            TopicPartition("orders", 0): OffsetAndMetadata(42, "m", -1),
            TopicPartition("orders", 1): OffsetAndMetadata(7, "", -1),
        }
    )
    consumer.close()
    fresh_cluster.restart(1)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    offsets = admin.list_group_offsets({"billing": None})["billing"]
    admin.close()
    assert offsets[TopicPartition("orders", 0)].offset == 42
    assert offsets[TopicPartition("orders", 1)].offset == 7


def test_confluent_and_aiokafka_group_consumers_commit(bootstrap: str, topic: str) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(10):
        producer.send(topic, b"m%d" % i)
    producer.flush(20)
    producer.close()

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"c-{topic}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
        }
    )
    consumer.subscribe([topic])
    got = []
    deadline = time.monotonic() + 30
    while len(got) < 10 and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and not msg.error():
            got.append(msg.value())
    consumer.commit(asynchronous=False)
    committed = consumer.committed([CTP(topic, 0)], timeout=10)
    consumer.close()
    assert got == [b"m%d" % i for i in range(10)]
    assert committed[0].offset == 10

    async def aio() -> int:
        c = AIOKafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=f"a-{topic}",
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        await c.start()
        try:
            seen = 0
            end = time.monotonic() + 30
            while seen < 10 and time.monotonic() < end:
                for records in (await c.getmany(timeout_ms=500)).values():
                    seen += len(records)
            await c.commit()
            return int(await c.committed(ATP(topic, 0)))
        finally:
            await c.stop()

    assert asyncio.run(aio()) == 10
