"""A private cluster for one benchmark, and a place to write what it measured."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
from confluent_kafka import Producer

from kafkalite.cluster import Cluster
from kafkalite.events import EventType
from tests.support.ports import free_base_port

RESULTS = Path(__file__).parent / "results"


def describe_or_run(module: str, doc: str | None) -> None:
    """Parse a benchmark's command line, which has no options: ``--help`` prints what it
    measures (the module's docstring) and exits, instead of starting a run of minutes."""
    argparse.ArgumentParser(
        prog=f"python -m {module}",
        description=doc,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    ).parse_args()


@contextlib.contextmanager
def sigterm_unwinds() -> Iterator[None]:
    """While a benchmark holds processes and directories of its own (clusters, a baseline's
    worktree), SIGTERM, what ``timeout`` and ``kill`` send, unwinds its stack as Ctrl-C
    does, so that they are stopped and removed: by default it ends the benchmark at once
    and leaves its brokers running, nobody's. (Signals are the main thread's only.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def bench_cluster(brokers: int = 1, configs: dict[str, str] | None = None) -> Iterator[Cluster]:
    with sigterm_unwinds(), tempfile.TemporaryDirectory(prefix="kafkalite-bench-") as tmp:
        cluster = Cluster.up(
            Path(tmp), brokers=brokers, base_port=free_base_port(brokers), configs=configs or {}
        )
        try:
            yield cluster
        finally:
            cluster.down()


def produce_all(
    producer: Producer, topic: str, value: bytes, count: int, partition: int = 0
) -> None:
    """Queue ``count`` records for ``partition``, waiting whenever the client's queue is full."""
    for _ in range(count):
        while True:
            try:
                producer.produce(topic, value, partition=partition)
                break
            except BufferError:
                producer.poll(0.001)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, all its threads (``/proc/<pid>/stat``)."""
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def broker_rss_mb(cluster: Cluster, broker_id: int = 1) -> float:
    return float(psutil.Process(cluster.pid(broker_id)).memory_info().rss) / 2**20


def record(name: str, results: dict[str, Any]) -> None:
    """Print and keep one benchmark's figures, with the machine they came from."""
    RESULTS.mkdir(exist_ok=True)
    payload = {
        "benchmark": name,
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": {
            "cpus": psutil.cpu_count(),
            "python": platform.python_version(),
            "load_average": load_average(),  # at the end of the run: was it quiet?
        },
        **results,
    }
    (RESULTS / f"{name}.json").write_text(json.dumps(payload, indent=2) + "\n")
    print(json.dumps(payload, indent=2))


BESIDE_CLUSTERS = 24
"""The load of the "busy" figures: ``bench.idle --clusters 24`` beside the measured
cluster, 72 idle brokers and their proxies: a course server with a class's clusters
(load average 4 or more on 2 cores)."""
QUIET_LOAD = 1.5
"""The one-minute load average under which the machine counts as quiet."""


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def wait_until_quiet(max_wait_s: float = 600, below: float = QUIET_LOAD) -> list[float]:
    """Wait (at most ``max_wait_s``) for a quiet moment: other work on a shared machine
    (another helper's tests) would count as load. Returns the load average then; the
    figures record it either way."""
    deadline = time.monotonic() + max_wait_s
    while os.getloadavg()[0] >= below and time.monotonic() < deadline:
        time.sleep(5)
    return load_average()


@contextlib.contextmanager
def idle_clusters_beside(count: int = BESIDE_CLUSTERS) -> Iterator[subprocess.Popen[bytes]]:
    """``bench.idle --clusters count --hold`` in a process of its own, for as long as the
    block runs: its clusters are up, settled and holding a lab's topics when the block
    starts, and stopped (``kafkalite down`` of each) when it ends."""
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.idle", "--clusters", str(count), "--hold"],
        stdout=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith(b"holding"):
                break
        else:
            raise RuntimeError(f"bench.idle --clusters {count} --hold ended: {process.wait()}")
        yield process
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(300)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def failover_steps(
    cluster: Cluster, since_ms: float, broker_id: int, topic: str, partition: int = 0
) -> dict[str, int | None]:
    """Where a failover's time went, from the cluster's events: ms after ``since_ms`` (the
    fault) until ``broker_id`` was fenced, and until another broker became the leader of
    ``topic``-``partition`` (None if not seen)."""
    events = [e for e in cluster.events() if e["time_ms"] >= since_ms]
    fenced = [
        e["time_ms"]
        for e in events
        if e["type"] == EventType.BROKER_FENCED and e.get("broker_id") == broker_id
    ]
    elected = [
        e["time_ms"]
        for e in events
        if e["type"] == EventType.LEADER_ELECTED
        and e.get("topic") == topic
        and int(e.get("partition", -1)) == int(partition)
        and e["broker"] != broker_id
    ]
    return {
        "fenced_ms": round(min(fenced) - since_ms) if fenced else None,
        "elected_ms": round(min(elected) - since_ms) if elected else None,
    }
