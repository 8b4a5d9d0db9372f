"""Free loopback ports for a lab cluster: each broker's Kafka port P, introspection P+100
and controller listener P+200, plus P+300.. for the fault layer's link proxies."""

from __future__ import annotations

import os
import random
import socket

# Below Linux's ephemeral range (32768-60999), so a client's own source port never takes a
# broker's port between this check and the broker's start.
LOW, HIGH = 10000, 32000


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def cluster_ports(base: int, brokers: int) -> list[int]:
    listeners = [base + offset + i for offset in (0, 100, 200) for i in range(brokers)]
    links = [base + 300 + k for k in range(2 * brokers * max(brokers - 1, 0))]
    return listeners + links


def _worker_range() -> tuple[int, int]:
    """Each pytest-xdist worker draws from its own slice of the range: two workers checking
    "free" at the same moment must never pick overlapping clusters."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    index = int(worker) if worker.isdigit() else 0
    width = (HIGH - LOW) // max(count, 1)
    return LOW + index * width, LOW + (index + 1) * width


def free_base_port(brokers: int = 1, rng: random.Random | None = None) -> int:
    """A base port such that every port a cluster of ``brokers`` uses is free."""
    rng = rng or random.Random()
    low, high = _worker_range()
    for _ in range(200):
        base = rng.randrange(low, high - 400)
        if all(_free(p) for p in cluster_ports(base, brokers)):
            return base
    raise RuntimeError("no free port range found")
