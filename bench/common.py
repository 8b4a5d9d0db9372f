"""A private cluster for one benchmark, and a place to write what it measured."""

from __future__ import annotations

import contextlib
import json
import platform
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
from confluent_kafka import Producer

from kafkalite.cluster import Cluster
from tests.support.ports import free_base_port

RESULTS = Path(__file__).parent / "results"


@contextlib.contextmanager
def bench_cluster(brokers: int = 1, configs: dict[str, str] | None = None) -> Iterator[Cluster]:
    with tempfile.TemporaryDirectory(prefix="kafkalite-bench-") as tmp:
        cluster = Cluster.up(
            Path(tmp), brokers=brokers, base_port=free_base_port(brokers), configs=configs or {}
        )
        try:
            yield cluster
        finally:
            cluster.down()


def produce_all(producer: Producer, topic: str, value: bytes, count: int) -> None:
    """Queue ``count`` records for partition 0, waiting whenever the client's queue is full."""
    for _ in range(count):
        while True:
            try:
                producer.produce(topic, value, partition=0)
                break
            except BufferError:
                producer.poll(0.001)


def broker_rss_mb(cluster: Cluster, broker_id: int = 1) -> float:
    return float(psutil.Process(cluster.pid(broker_id)).memory_info().rss) / 2**20


def record(name: str, results: dict[str, Any]) -> None:
    """Print and keep one benchmark's figures, with the machine they came from."""
    RESULTS.mkdir(exist_ok=True)
    payload = {
        "benchmark": name,
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": {"cpus": psutil.cpu_count(), "python": platform.python_version()},
        **results,
    }
    (RESULTS / f"{name}.json").write_text(json.dumps(payload, indent=2) + "\n")
    print(json.dumps(payload, indent=2))
