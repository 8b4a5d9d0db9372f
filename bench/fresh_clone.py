"""The README's first command on a fresh clone: ``git clone`` of this checkout's commit,
then ``make up`` (installing everything into the clone's ``.venv/``, packages from uv's
cache, then three brokers and JupyterLab) until JupyterLab answers with the printed token;
then ``make down``. The wall time is kept, and the CPU time of the processes ``make up``
waited for (the installs, the launcher; not the detached brokers and JupyterLab): on a
shared machine the wall time mostly measures the others' load. Not part of ``make bench``:
it installs a whole ``.venv/``.

Run: ``.venv/bin/python -m bench.fresh_clone``.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import tempfile
import time
from pathlib import Path

import psutil

from bench.common import describe_or_run, record
from bench.lab_startup import reachable
from tests.support.ports import free_base_port

TARGET_S = 60
ROOT = Path(__file__).resolve().parent.parent


def children_cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def stop_what_runs_from(clone: Path) -> None:
    """``make up`` goes on building Spark's class archive in the background: stop what
    still runs from the clone before it is removed."""
    for process in psutil.process_iter(["cmdline"]):
        if any(str(clone) in part for part in process.info["cmdline"] or []):
            process.terminate()


def main() -> None:
    describe_or_run("bench.fresh_clone", __doc__)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="kafkalite-fresh-clone-") as tmp:
        clone = Path(tmp) / "kafka-lite"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "checkout", "--quiet", commit], cwd=clone, check=True)
        ports = [f"PORT={free_base_port(3)}", f"JUPYTER_PORT={free_base_port(1)}"]
        load = os.getloadavg()[0]
        cpu_before = children_cpu_s()
        started = time.perf_counter()
        try:
            up = subprocess.run(
                ["make", "up", *ports], cwd=clone, capture_output=True, text=True, check=True
            )
            url = re.search(r"open:\s+(\S+)", up.stdout)
            assert url and reachable(url.group(1)), up.stdout[-2000:]
            wall_s = time.perf_counter() - started
            cpu_s = children_cpu_s() - cpu_before
        finally:
            subprocess.run(["make", "down"], cwd=clone, capture_output=True, check=False)
            stop_what_runs_from(clone)
    record(
        "fresh_clone",
        {
            "commit": commit[:7],
            "load_average_1m_at_start": round(load, 1),
            "make_up_to_jupyterlab_answering_s": round(wall_s, 1),
            "make_up_cpu_s": round(cpu_s, 1),
            "target_s": TARGET_S,
        },
    )


if __name__ == "__main__":
    main()
