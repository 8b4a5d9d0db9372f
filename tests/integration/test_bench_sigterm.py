"""A benchmark stopped by SIGTERM (what ``timeout`` and ``kill`` send) stops its cluster
and removes its directory (``bench.common.sigterm_unwinds``). Before, its brokers ran on,
nobody's, each costing the machine its idle CPU until found by hand."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop]

REPO = Path(__file__).resolve().parents[2]
BENCHMARK = """
import time
from bench.common import bench_cluster
with bench_cluster(1) as cluster:
    print(cluster.pid(1), cluster.spec.root, flush=True)
    time.sleep(600)
"""


def test_a_benchmark_stopped_by_sigterm_stops_its_cluster() -> None:
    bench = subprocess.Popen(
        [sys.executable, "-c", BENCHMARK], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        assert bench.stdout is not None
        pid, root = bench.stdout.readline().split()  # '' (and a failure) if it ended
        bench.send_signal(signal.SIGTERM)
        bench.wait(60)
    finally:
        bench.kill()
    wait_for(lambda: not _running(int(pid)), 30, f"broker {pid} gone")
    assert not Path(root).exists()


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
