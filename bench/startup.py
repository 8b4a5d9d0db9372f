"""Cluster start-up to ready: ``Cluster.up`` until every broker answers (median of runs).

Run: ``.venv/bin/python -m bench.startup``.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from bench.common import record
from kafkalite.cluster import Cluster
from tests.support.ports import free_base_port

RUNS = 5


def main(brokers: int = 1) -> None:
    seconds = []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory(prefix="kafkalite-start-") as tmp:
            started = time.perf_counter()
            cluster = Cluster.up(Path(tmp), brokers=brokers, base_port=free_base_port(brokers))
            seconds.append(time.perf_counter() - started)
            cluster.down()
    record(
        "startup",
        {
            "brokers": brokers,
            "runs": RUNS,
            "median_s": round(statistics.median(seconds), 2),
            "max_s": round(max(seconds), 2),
        },
    )


if __name__ == "__main__":
    main()
