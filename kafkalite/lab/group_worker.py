"""One member of a consumer group in its own process: ``python -m kafkalite.lab.group_worker``.

Lab 06 runs the members of a group as processes, as real services are run, so that one
can really be killed (SIGKILL: no LeaveGroup, no last commit) or frozen (SIGSTOP: a long
garbage-collection pause) while the others go on. Each worker is a kafka-python consumer
subscribed to one topic; it "processes" each record (waits ``--per-record-ms``) and
commits as ``--commit`` says:

- ``after``: after each poll's records are processed (at least once);
- ``before``: before processing them (at most once);
- ``auto``: kafka-python's auto-commit (``enable_auto_commit``), records processed in the
  poll loop;
- ``auto-handoff``: auto-commit, but records are handed to a processing thread, as an
  application with a work queue does: auto-commit may then commit records not processed
  yet.

Everything it does is a JSON line in ``--log`` (assigned, revoked, polled, processed,
committed, commit_failed, frozen): the notebook reads the log to show who processed what. A line is
written before the step it announces only where the step itself cannot be logged after
(``frozen``).

``--protocol`` chooses the group protocol: ``classic`` (the default: kafka-python, whose
members run JoinGroup/SyncGroup rounds and assign partitions among themselves with
``--assignor``) or ``consumer`` (KIP-848, Kafka 4.0: a confluent-kafka consumer with
``group.protocol=consumer``, whose partitions the coordinator assigns and moves one
heartbeat at a time; ``--assignor`` and ``--session-timeout-ms`` are then the group's
business, not the member's).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import logging
import os
import queue
import signal
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaException, Message
from confluent_kafka import TopicPartition as ConfluentTopicPartition
from kafka import ConsumerRebalanceListener, KafkaConsumer, TopicPartition
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.errors import CommitFailedError, KafkaError

from kafkalite.lab.recording import never_auto_create

POLL_TIMEOUT_MS = 1000
"""Long enough for a whole rebalance to end inside one poll: kafka-python 3.0.12 never
applies a SyncGroup answer that arrives after the poll that sent it timed out (the member
then holds no partition and sends no heartbeat until its session ends); a poll returns as
soon as it has records, so a long timeout costs only a slower stop."""
COMMIT_MODES = ("after", "before", "auto", "auto-handoff")
PROTOCOLS = ("classic", "consumer")
ASSIGNORS = {
    "range": RangePartitionAssignor,
    "cooperative-sticky": CooperativeStickyAssignor,
}


class Log:
    """The worker's JSON-lines log, one line per step, flushed at once (a SIGKILL keeps
    what the kernel was given)."""

    def __init__(self, path: Path, name: str) -> None:
        self.name = name
        self._file = path.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, event: str, **fields: Any) -> None:
        line = json.dumps({"worker": self.name, "event": event, "time": time.time(), **fields})
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()


def _names(partitions: Iterable[TopicPartition | ConfluentTopicPartition]) -> list[int]:
    return sorted(tp.partition for tp in partitions)


@dataclass(frozen=True, slots=True)
class Polled:
    """One record as the loop sees it, from either client."""

    partition: int
    offset: int
    value: bytes


class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, log: Log, consumer: KafkaConsumer) -> None:
        self.log = log
        self.consumer = consumer

    def on_partitions_revoked(self, revoked: Iterable[TopicPartition]) -> None:
        self.log.write("revoked", partitions=_names(revoked))

    def on_partitions_assigned(self, assigned: Iterable[TopicPartition]) -> None:
        generation = self.consumer.group_metadata().generation_id
        self.log.write("assigned", partitions=_names(assigned), generation=generation)


PR_SET_PDEATHSIG = 1


def die_with(parent: int) -> None:
    """SIGKILL this process when ``parent`` (the notebook's kernel) dies (Linux), so a
    group member never outlives the lab that started it, keeping its group and topic
    busy; a parent already gone ends it now."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        raise SystemExit(f"the process that started this worker ({parent}) is gone")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m kafkalite.lab.group_worker")
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--log", required=True, type=Path)
    parser.add_argument("--parent", type=int, help="die with this process (the kernel)")
    parser.add_argument("--commit", choices=COMMIT_MODES, default="after")
    parser.add_argument("--per-record-ms", type=int, default=100)
    parser.add_argument("--max-poll-records", type=int, default=5)
    parser.add_argument("--instance-id", help="group.instance.id: a static member (KIP-345)")
    parser.add_argument("--assignor", choices=sorted(ASSIGNORS), default="range")
    parser.add_argument("--protocol", choices=PROTOCOLS, default="classic")
    parser.add_argument("--session-timeout-ms", type=int, default=6000)
    parser.add_argument(
        "--freeze-before-commit",
        type=int,
        default=0,
        help="stop this process (SIGSTOP) right before its Nth commit, as a long pause would",
    )
    return parser


class ClassicClient:
    """kafka-python: the classic protocol (JoinGroup, SyncGroup, Heartbeat)."""

    commit_errors: tuple[type[Exception], ...] = (CommitFailedError, KafkaError)

    def __init__(self, args: argparse.Namespace, log: Log) -> None:
        self.consumer = KafkaConsumer(
            bootstrap_servers=args.bootstrap,
            group_id=args.group,
            client_id=args.name,
            group_instance_id=args.instance_id,
            enable_auto_commit=args.commit.startswith("auto"),
            auto_commit_interval_ms=1000,
            auto_offset_reset="earliest",
            max_poll_records=args.max_poll_records,
            session_timeout_ms=args.session_timeout_ms,
            heartbeat_interval_ms=min(1000, args.session_timeout_ms // 3),
            partition_assignment_strategy=[ASSIGNORS[args.assignor]],
            request_timeout_ms=10000,
            reconnect_backoff_max_ms=1000,
            metadata_max_age_ms=5000,
        )
        never_auto_create(self.consumer._cluster)
        self.consumer.subscribe([args.topic], listener=Listener(log, self.consumer))
        # The topic's partitions known before the first JoinGroup (a first join without them
        # assigns nothing and has to be followed by a second one at once), and fetched only
        # once subscribed: kafka-python records what its metadata says of the subscribed
        # topics only when metadata arrives after subscribe(). Fetched before, the group's
        # leader assigned from partitions its snapshot did not have, and the next metadata
        # refresh made it join again at once: a second rebalance after every first join,
        # which a static member restarting then joined instead of taking its place (lab 06).
        self.consumer.partitions_for_topic(args.topic)

    def poll(self) -> list[Polled]:
        batches = self.consumer.poll(timeout_ms=POLL_TIMEOUT_MS)
        return [Polled(r.partition, r.offset, r.value) for rs in batches.values() for r in rs]

    def positions(self) -> dict[int, int]:
        return {tp.partition: self.consumer.position(tp) for tp in self.consumer.assignment()}

    def commit(self) -> None:
        self.consumer.commit()

    def close(self) -> None:
        self.consumer.close(autocommit=False)  # a graceful stop leaves the group at once


class ConsumerProtocolClient:
    """confluent-kafka with ``group.protocol=consumer`` (KIP-848): its assignment comes
    from the coordinator, partition by partition (``on_assign`` and ``on_revoke`` get
    only what is added or taken away)."""

    commit_errors: tuple[type[Exception], ...] = (KafkaException,)

    def __init__(self, args: argparse.Namespace, log: Log) -> None:
        config: dict[str, Any] = {
            "bootstrap.servers": args.bootstrap,
            "group.id": args.group,
            "group.protocol": "consumer",
            "client.id": args.name,
            "enable.auto.commit": args.commit.startswith("auto"),
            "auto.commit.interval.ms": 1000,
            "auto.offset.reset": "earliest",
            "allow.auto.create.topics": False,
            "log_level": 3,
        }
        if args.instance_id:
            config["group.instance.id"] = args.instance_id
        self.consumer = Consumer(config)
        self.max_records = args.max_poll_records
        self.consumer.subscribe(
            [args.topic],
            on_assign=lambda _, tps: log.write("assigned", partitions=_names(tps)),
            on_revoke=lambda _, tps: log.write("revoked", partitions=_names(tps)),
        )

    def poll(self) -> list[Polled]:
        messages: list[Message] = self.consumer.consume(self.max_records, POLL_TIMEOUT_MS / 1000)
        return [
            Polled(m.partition() or 0, m.offset() or 0, m.value() or b"")
            for m in messages
            if m.error() is None
        ]

    def positions(self) -> dict[int, int]:
        assigned = self.consumer.assignment()
        return {tp.partition: tp.offset for tp in self.consumer.position(assigned)}

    def commit(self) -> None:
        self.consumer.commit(asynchronous=False)

    def close(self) -> None:
        self.consumer.close()  # leaves the group (member epoch -1) at once


class Worker:
    """The consume loop: poll, process, commit as ``--commit`` says, log every step."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.log = Log(args.log, args.name)
        kind = ConsumerProtocolClient if args.protocol == "consumer" else ClassicClient
        self.client: ClassicClient | ConsumerProtocolClient = kind(args, self.log)
        self.stopping = threading.Event()
        self.work: queue.Queue[Polled] = queue.Queue()
        self.commits = 0

    def process(self, record: Polled) -> None:
        time.sleep(self.args.per_record_ms / 1000)
        value = record.value.decode(errors="replace")
        self.log.write("processed", partition=record.partition, offset=record.offset, value=value)

    def commit(self) -> None:
        self.commits += 1
        if self.commits == self.args.freeze_before_commit:
            self.log.write("frozen", pid=os.getpid())
            os.kill(os.getpid(), signal.SIGSTOP)  # resumed by SIGCONT, a pause later
        offsets = self.client.positions()
        try:
            self.client.commit()
            self.log.write("committed", offsets=offsets)
        except self.client.commit_errors as error:  # the group moved on without it
            self.log.write("commit_failed", error=type(error).__name__, message=str(error)[:200])

    def drain(self) -> None:
        """``auto-handoff``: the processing thread, behind a work queue."""
        while True:
            self.process(self.work.get())

    def run(self) -> None:
        mode = self.args.commit
        if mode == "auto-handoff":
            threading.Thread(target=self.drain, name="processing", daemon=True).start()
        while not self.stopping.is_set():
            records = self.client.poll()
            if not records:
                continue
            self.log.write("polled", records=len(records))
            if mode == "before":
                self.commit()
            for record in records:
                if mode == "auto-handoff":
                    self.work.put(record)
                else:
                    self.process(record)
            if mode == "after":
                self.commit()
        self.client.close()
        self.log.write("closed")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if args.parent:
        die_with(args.parent)
    worker = Worker(args)
    signal.signal(signal.SIGTERM, lambda *_: worker.stopping.set())
    worker.run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
