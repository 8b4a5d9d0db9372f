"""Restart after ``kill -9`` with 1 GiB of log: how long until the broker serves again.

One broker, one partition written with ~1 GiB by an idempotent confluent-kafka producer
(1 MiB segments, the lab default), then ``kill -9`` and a start. Reported: the time from
starting the process to the broker answering (``Cluster.start``), the part of it spent
opening the logs (the broker's own "loaded N logs" line), and the same for a broker with
no data, so the log's share is plain. Target: restart in 2 s or less.

Run: ``.venv/bin/python -m bench.restart`` (``RESTART_BENCH_MIB`` for another size).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from confluent_kafka import Producer

from bench.common import bench_cluster, describe_or_run, produce_all, record
from kafkalite.cluster import Cluster
from tests.support.topics import create_topic

MIB = 1 << 20
RECORD = b"r" * 16 * 1024
LOADED = re.compile(r"loaded (\d+) logs \(([\d.]+) MiB\) in ([\d.]+) s")


def fill(bootstrap: str, topic: str, mib: int) -> None:
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "linger.ms": 20,
            "batch.size": 256 * 1024,
            "queue.buffering.max.kbytes": 262144,
        }
    )
    produce_all(producer, topic, RECORD, mib * MIB // len(RECORD))
    assert producer.flush(300) == 0


def kill_and_restart(cluster: Cluster) -> dict[str, float | None]:
    """``kill -9``, then start: seconds to ready, and the broker's log-loading time."""
    cluster.kill(1)
    log_file = Path(cluster.spec.broker(1).data_dir) / "broker.log"
    seen = len(log_file.read_text())
    started = time.perf_counter()
    cluster.start(1)
    ready = time.perf_counter() - started
    lines = LOADED.findall(log_file.read_text()[seen:])
    loaded = round(float(lines[-1][2]), 3) if lines else None  # brokers before 2026-11-23
    return {"ready_s": round(ready, 2), "logs_loaded_s": loaded}


def main() -> None:
    describe_or_run("bench.restart", __doc__)
    mib = int(os.environ.get("RESTART_BENCH_MIB", "1024"))
    with bench_cluster() as cluster:
        empty = kill_and_restart(cluster)
        create_topic(cluster.bootstrap_servers, "restart", 1, 1)
        started = time.perf_counter()
        fill(cluster.bootstrap_servers, "restart", mib)
        filled_s = time.perf_counter() - started
        after_crash = kill_and_restart(cluster)
        cluster.stop(1)
        started = time.perf_counter()
        cluster.start(1)
        clean_ready = time.perf_counter() - started
    record(
        "restart",
        {
            "log_mib": mib,
            "fill_s": round(filled_s, 1),
            "empty_broker_after_kill": empty,
            "after_kill_9": after_crash,
            "after_clean_stop_ready_s": round(clean_ready, 2),
            "target_s": 2,
            "load_average": [round(x, 1) for x in os.getloadavg()],
        },
    )


if __name__ == "__main__":
    main()
