"""The lab image's Jupyter server extension, in a real Jupyter server beside a real
3-broker cluster: what a course's staff see of a student's cluster (brokers up, the last
fault) and the reset that empties it, behind the server's own authentication, and without
counting as the student's activity (the hub's idle culler must still see them idle)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from kafkalite.cluster import Cluster
from kafkalite.lab.connection import DEFAULT_DIR_NAME
from tests.support.ports import free_base_port
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.labs, pytest.mark.slow]

TOKEN = "staff-token"


class Server:
    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"

    def call(self, path: str, method: str = "GET", token: str | None = TOKEN) -> Any:
        request = urllib.request.Request(
            f"{self.base}/{path}",
            method=method,
            data=b"" if method == "POST" else None,
            headers={"Authorization": f"token {token}"} if token else {},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def answers(self) -> bool:
        try:
            return bool(self.call("api/status"))
        except OSError:
            return False


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """``jupyter server`` on ``labs/`` with the extension on, as the lab image runs it."""
    labs = tmp_path / "labs"
    labs.mkdir()
    port = free_base_port(1)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter_server",
            f"--port={port}",
            "--ip=127.0.0.1",
            f"--ServerApp.root_dir={labs}",
            f"--IdentityProvider.token={TOKEN}",
            "--ServerApp.jpserver_extensions=kafkalite.lab.server_extension=True",
            "--ServerApp.open_browser=False",
            "--allow-root",  # CI runs as root
        ],
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "jupyter.log").open("wb"),
    )
    started = Server(port)
    try:
        wait_for(started.answers, 60, "the Jupyter server")
        yield started
    finally:
        process.terminate()
        process.wait(30)


def test_staff_see_brokers_up_and_the_last_fault_then_reset_the_cluster(
    server: Server, tmp_path: Path
) -> None:
    assert server.call("kafkalite/cluster")["cluster"] is None  # no connect() yet
    root = tmp_path / "labs" / DEFAULT_DIR_NAME
    cluster = Cluster.up(root, brokers=3, base_port=free_base_port(3))
    try:
        idle_since = server.call("api/status")["last_activity"]
        seen = server.call("kafkalite/cluster")
        assert seen["brokers"] == {"1": "running", "2": "running", "3": "running"}
        assert (seen["brokers_up"], seen["last_fault"]) == (3, None)

        cluster.kill(2)
        seen = wait_for(
            lambda: (h := server.call("kafkalite/cluster"))["last_fault"] and h,
            30,
            "the fence of broker 2 in the health",
        )
        assert seen["brokers"]["2"] == "dead" and seen["brokers_up"] == 2
        assert seen["last_fault"]["type"] == "broker_fenced"
        assert seen["last_fault"]["broker"] == 2
        assert 0 <= seen["last_fault"]["seconds_ago"] < 30

        with pytest.raises(urllib.error.HTTPError) as refused:
            server.call("kafkalite/cluster", token=None)
        assert refused.value.code == 403
        assert server.call("api/status")["last_activity"] == idle_since, "staff counted as use"

        pids = [cluster.pid(b) for b in (1, 3)]
        assert server.call("kafkalite/cluster/reset", "POST") == {
            "reset": True,
            "cluster": str(root),
            "brokers_stopped": 2,
        }
        assert not root.exists()
        assert not any(
            psutil.pid_exists(p) and psutil.Process(p).status() != "zombie" for p in pids
        )
        assert server.call("kafkalite/cluster")["cluster"] is None
        assert server.call("kafkalite/cluster/reset", "POST") == {"reset": False, "cluster": None}
    finally:
        if root.exists():
            cluster.down()
