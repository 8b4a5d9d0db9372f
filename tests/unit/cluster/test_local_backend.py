"""The local backend knows its brokers by their command line, not by a pid alone: a pid
recorded by an earlier run may be another process's now (a student's new container counts
pids from 1 again), and a fault verb must never reach that process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from kafkalite.cluster import BrokerState
from kafkalite.cluster.local import LocalProcessBackend
from kafkalite.cluster.spec import BrokerSpec

pytestmark = pytest.mark.unit


@pytest.fixture
def stranger() -> Iterator[subprocess.Popen[bytes]]:
    """A process that is no broker (a student's kernel, say)."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def test_a_recorded_pid_now_held_by_another_process_is_a_dead_broker(
    tmp_path: Path, stranger: subprocess.Popen[bytes]
) -> None:
    broker = BrokerSpec(1, "127.0.0.1", 9092, 9192, str(tmp_path / "broker-1"), 9292)
    broker.pid = stranger.pid
    backend = LocalProcessBackend()
    assert backend.state(broker) == BrokerState.DEAD
    backend.pause(broker)
    assert psutil.Process(stranger.pid).status() != psutil.STATUS_STOPPED, "paused a stranger"
    backend.kill(broker)
    assert stranger.poll() is None, "kill reached a process that is not the broker"
