"""``kafkalite lab`` to a reachable JupyterLab: the time from running the command (as
``make up`` does, once installed) until JupyterLab answers its API with the printed token,
from nothing running (cold: three brokers and JupyterLab start) and with the cluster
already up (JupyterLab only). Median and max of a few runs; everything is stopped after.
On a busy machine wall-clock time mostly measures the others' load, so the CPU time
JupyterLab used until it answered is kept too.

Run: ``.venv/bin/python -m bench.lab_startup``.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil

from bench.common import describe_or_run, record
from tests.support.ports import free_base_port

RUNS = 3
TARGET_S = 15
LABS = Path(__file__).resolve().parent.parent / "labs"


def kafkalite(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "kafkalite", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def reachable(url: str) -> bool:
    base, token = url.split("/lab?token=")
    request = urllib.request.Request(
        f"{base}/api/status", headers={"Authorization": f"token {token}"}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return bool(response.status == 200)


def one_run(cluster_running: bool) -> tuple[float, float]:
    """Seconds until JupyterLab answered, and the CPU seconds JupyterLab used by then."""
    with tempfile.TemporaryDirectory(prefix="kafkalite-lab-bench-") as tmp:
        root = str(Path(tmp) / "cluster")
        kafka_port = str(free_base_port(3))
        jupyter_port = str(free_base_port(1))
        if cluster_running:
            kafkalite("up", "--brokers", "3", "--dir", root, "--port", kafka_port)
        try:
            started = time.perf_counter()
            out = kafkalite(
                "lab",
                "--dir",
                root,
                "--kafka-port",
                kafka_port,
                "--port",
                jupyter_port,
                "--labs",
                str(LABS),
            )
            match = re.search(r"open:\s+(\S+)", out)
            assert match and reachable(match.group(1)), out
            elapsed = time.perf_counter() - started
            pid = json.loads((Path(root) / "jupyter.json").read_text())["pid"]
            cpu = psutil.Process(pid).cpu_times()
            return elapsed, cpu.user + cpu.system
        finally:
            kafkalite("down", "--dir", root)


def summary(seconds: list[float]) -> dict[str, float]:
    return {"median_s": round(statistics.median(seconds), 2), "max_s": round(max(seconds), 2)}


def main() -> None:
    describe_or_run("bench.lab_startup", __doc__)
    cold = [one_run(cluster_running=False) for _ in range(RUNS)]
    warm = [one_run(cluster_running=True) for _ in range(RUNS)]
    record(
        "lab_startup",
        {
            "runs": RUNS,
            "load_average_1m": round(os.getloadavg()[0], 1),
            "cold_cluster_and_jupyterlab": summary([s for s, _ in cold]),
            "cluster_running_jupyterlab_only": summary([s for s, _ in warm]),
            "jupyterlab_cpu_until_reachable": summary([c for _, c in cold + warm]),
            "target_s": TARGET_S,
        },
    )


if __name__ == "__main__":
    main()
