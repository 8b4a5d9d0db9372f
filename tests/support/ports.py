"""Free ports for test clusters: each pytest-xdist worker draws from its own slice of the
range (the suite's lane's, ``KAFKALITE_PORT_RANGE``), so two workers or two lanes checking
"free" at the same moment never pick overlapping clusters."""

from __future__ import annotations

import os
import random

from kafkalite.cluster.ports import cluster_ports, port_range, range_share
from kafkalite.cluster.ports import free_base_port as _free_base_port

__all__ = ["cluster_ports", "free_base_port"]


def _worker_range() -> tuple[int, int]:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    index = int(worker) if worker.isdigit() else 0
    return range_share(index, count, *port_range())


def free_base_port(brokers: int = 1, rng: random.Random | None = None) -> int:
    """A base port such that every port a cluster of ``brokers`` uses is free."""
    low, high = _worker_range()
    return _free_base_port(brokers, low, high, rng)
