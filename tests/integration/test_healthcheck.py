"""The containers' health probe against a real broker, run the way Docker runs it: as a
plain script with no site-packages (``python -I -S``), so it must need nothing but the
standard library."""

from __future__ import annotations

import subprocess
import sys

import pytest

import kafkalite.cluster.healthcheck as healthcheck
from kafkalite.cluster import Cluster
from tests.support.ports import free_base_port

pytestmark = pytest.mark.interop


def test_probe_passes_on_a_broker_and_fails_on_a_closed_port(cluster: Cluster) -> None:
    broker = cluster.spec.brokers[0]
    script = healthcheck.__file__
    ok = subprocess.run(
        [sys.executable, "-I", "-S", script, broker.host, str(broker.port)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert (ok.returncode, ok.stderr) == (0, "")
    closed = free_base_port()
    failed = subprocess.run(
        [sys.executable, "-I", "-S", script, "127.0.0.1", str(closed)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert failed.returncode == 1
    assert failed.stderr.startswith(f"no ApiVersions answer from 127.0.0.1:{closed}")
