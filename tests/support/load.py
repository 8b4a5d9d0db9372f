"""Load for tests that must hold under a busy machine: CPU burners and client traffic.

Both are context managers that stop everything they started, even when the test fails.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

STARVATION_S = 120
STARVING_CLIENTS = 6
"""The starvation of ``test_starvation`` and ``bench.starvation``: six students' clients
for two minutes beside a CPU burner on every core."""

BURN = """
import os, sys
while os.getppid() == int(sys.argv[1]):
    for _ in range(1_000_000):
        pass
"""
"""Spins until the test process is gone, not forever: a run killed before its ``finally``
(a CI timeout, a developer's Ctrl-C twice) left burners spinning for the runs after it."""


@contextlib.contextmanager
def cpu_burners(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` processes that each spin one core for as long as the block runs."""
    command = [sys.executable, "-c", BURN, str(os.getpid())]
    burners = [subprocess.Popen(command) for _ in range(count)]
    try:
        yield burners
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:
            burner.wait(10)


class ProducerLoad:
    """A librdkafka producer that keeps sending to ``topic`` from a thread, at most
    ``records_per_s``; counts what was acknowledged and what failed (the test decides
    what failures mean).

    Bounded because unbounded it wrote gigabytes in a few minutes of a test: a broker
    restarted in that test then spent half a minute opening thousands of 1-MiB segments
    and missed its start-up bound. Client load means requests in flight, not a full disk.
    """

    def __init__(
        self, bootstrap: str, topic: str, value_bytes: int = 1024, records_per_s: int = 2000
    ) -> None:
        self.topic = topic
        self.value = b"x" * value_bytes
        self.records_per_s = records_per_s
        self.acked = 0
        self.failed = 0
        self._producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"load-{topic}", daemon=True)

    def _delivered(self, error: object, _message: object) -> None:
        if error is None:
            self.acked += 1
        else:
            self.failed += 1

    def _run(self) -> None:
        started = time.monotonic()
        sent = 0
        while not self._stop.is_set():
            ahead_s = sent / self.records_per_s - (time.monotonic() - started)
            if ahead_s > 0:
                self._producer.poll(ahead_s)  # serves delivery reports meanwhile
                continue
            try:
                self._producer.produce(self.topic, self.value, on_delivery=self._delivered)
            except (BufferError, KafkaException):
                self._producer.poll(0.05)
                continue
            sent += 1
            self._producer.poll(0)

    def __enter__(self) -> ProducerLoad:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
        self._producer.flush(10)


def client_process(bootstrap: str, topics: list[str], seconds: float, results: Any) -> None:
    """One student's worth of traffic, in its own process (run with the ``spawn`` start
    method): a kafka-python producer over every topic and, every 50 records, a Metadata
    request (librdkafka's ``list_topics``) whose broker list is recorded. Puts a summary
    dict on ``results``."""
    from confluent_kafka.admin import AdminClient  # noqa: PLC0415  (a spawned process)
    from kafka import KafkaProducer  # noqa: PLC0415
    from kafka.errors import KafkaError  # noqa: PLC0415

    deadline = time.monotonic() + seconds
    summary = {"sent": 0, "metadata": 0, "empty_metadata": 0, "errors": 0}
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=5)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        while time.monotonic() < deadline:
            for topic in topics:
                producer.send(topic, b"x" * 200)
                summary["sent"] += 1
                if summary["sent"] % 50:
                    continue
                try:
                    brokers = admin.list_topics(timeout=10).brokers
                except KafkaException:
                    summary["errors"] += 1
                    continue
                summary["metadata"] += 1
                summary["empty_metadata"] += not brokers
                if time.monotonic() >= deadline:
                    break
    except KafkaError:
        summary["errors"] += 1
    finally:
        producer.close(timeout=10)
        results.put(summary)


def client_load(
    bootstrap: str, topics: list[str], seconds: float, processes: int
) -> list[dict[str, Any]]:
    """``processes`` client processes for ``seconds``; their summaries."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    workers = [
        context.Process(target=client_process, args=(bootstrap, topics, seconds, results))
        for _ in range(processes)
    ]
    for worker in workers:
        worker.start()
    deadline = time.monotonic() + seconds + 120
    summaries: list[dict[str, Any]] = []
    for _ in workers:
        try:
            summaries.append(results.get(timeout=max(1.0, deadline - time.monotonic())))
        except queue.Empty:
            summaries.append({"hung": True})  # never finished: the test says so
    for worker in workers:
        worker.join(10)
        if worker.is_alive():
            worker.kill()
    return summaries


def create_busy_topics(bootstrap: str, count: int, partitions: int, rf: int) -> list[str]:
    """``count`` topics ``busy-N`` of ``partitions`` partitions each, for the load."""
    names = [f"busy-{i}" for i in range(count)]
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(n, partitions, rf) for n in names])
    for future in futures.values():
        future.result(120)
    return names


def starve(bootstrap: str, topics: list[str]) -> list[dict[str, Any]]:
    """A CPU burner on every core and ``STARVING_CLIENTS`` client processes writing to
    ``topics`` for ``STARVATION_S``; the clients' summaries."""
    with cpu_burners(os.cpu_count() or 2):
        return client_load(bootstrap, topics, STARVATION_S, STARVING_CLIENTS)
