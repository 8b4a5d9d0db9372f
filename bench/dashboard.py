"""The dashboard's refresh rate and what it costs the notebook's kernel while it idles.

A real IPython kernel (jupyter_client, as JupyterLab starts one) runs ``Dashboard(cluster)``
against a 3-broker cluster with 3 topics of 3 partitions (RF 3), records written; then,
with nothing else happening, the kernel process's CPU time is read over a window
(psutil), and the dashboard's own refresh counter gives refreshes per second. Also: the
same with one broker paused (a hung broker must not slow the refresh).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import psutil
from jupyter_client.manager import start_new_kernel
from kafka import KafkaProducer

from bench.common import bench_cluster, record
from kafkalite.cluster import Cluster
from tests.support.topics import create_topic

WARMUP_S = 5.0
WINDOW_S = 30.0
TOPICS = 3


def _run(client: Any, code: str, timeout_s: float = 60) -> str:
    """Execute in the kernel; return its last stdout line."""
    out: list[str] = []

    def hook(msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        if msg["msg_type"] == "error":
            raise RuntimeError("\n".join(msg["content"]["traceback"]))

    client.execute_interactive(code, timeout=timeout_s, output_hook=hook)
    return "".join(out).strip().splitlines()[-1] if out else ""


def _measure(client: Any, kernel_pid: int) -> dict[str, float]:
    process = psutil.Process(kernel_pid)
    time.sleep(WARMUP_S)
    before = process.cpu_times()
    start_refreshes = int(_run(client, "print(d.poller.refreshes)"))
    started = time.monotonic()
    time.sleep(WINDOW_S)
    after = process.cpu_times()
    elapsed = time.monotonic() - started
    refreshes = int(_run(client, "print(d.poller.refreshes)"))
    cpu = (after.user - before.user) + (after.system - before.system)
    return {
        "kernel_cpu_percent_of_one_core": round(100 * cpu / elapsed, 1),
        "refreshes_per_s": round((refreshes - start_refreshes) / elapsed, 2),
    }


def _setup(cluster: Cluster) -> None:
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    for t in range(TOPICS):
        create_topic(cluster.bootstrap_servers, f"bench-{t}", 3, 3)
        for i in range(300):
            producer.send(f"bench-{t}", f"record-{i}".encode())
    producer.flush(60)
    producer.close()


KERNEL_SETUP = """
from pathlib import Path
from kafkalite.cluster import Cluster
from kafkalite.lab.dashboard import Dashboard
d = Dashboard(Cluster.attach(Path({root!r})))
print("ready")
"""


def main() -> None:
    results: dict[str, Any] = {"window_s": WINDOW_S, "topics": TOPICS, "partitions": TOPICS * 3}
    with bench_cluster(3) as cluster:
        _setup(cluster)
        env = {**os.environ, "PYTHONPATH": os.getcwd()}
        manager, client = start_new_kernel(kernel_name="python3", env=env)
        try:
            pid = int(_run(client, "import os; print(os.getpid())"))
            assert _run(client, KERNEL_SETUP.format(root=cluster.spec.root)) == "ready"
            results["idle"] = _measure(client, pid)
            cluster.pause(2)
            results["one_broker_paused"] = _measure(client, pid)
            cluster.resume(2)
            _run(client, "d.close()")
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)
    results["load_average"] = [round(x, 2) for x in os.getloadavg()]
    record("dashboard", results)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
