"""Cluster start-up to ready: ``Cluster.up`` until every broker has registered with the
quorum and answers (median of runs), for one and for three brokers.

Run: ``.venv/bin/python -m bench.startup``.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from bench.common import describe_or_run, record
from kafkalite.cluster import Cluster
from tests.support.ports import free_base_port

RUNS = 5


def median_startup(brokers: int) -> dict[str, float]:
    seconds = []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory(prefix="kafkalite-start-") as tmp:
            started = time.perf_counter()
            cluster = Cluster.up(Path(tmp), brokers=brokers, base_port=free_base_port(brokers))
            seconds.append(time.perf_counter() - started)
            cluster.down()
    return {"median_s": round(statistics.median(seconds), 2), "max_s": round(max(seconds), 2)}


def main() -> None:
    describe_or_run("bench.startup", __doc__)
    record(
        "startup",
        {"runs": RUNS, "brokers": {str(n): median_startup(n) for n in (1, 3)}, "target_3_s": 1.5},
    )


if __name__ == "__main__":
    main()
